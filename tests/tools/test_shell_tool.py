"""The shell tool end to end: real subprocesses, output format, timeouts, sandboxing."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import anyio
import pytest
from msgspec.structs import replace

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.bwrap import SandboxAvailability, detect_bwrap
from mini_codex.tools.base import ToolContext, ToolOutput
from mini_codex.tools.shell import ShellTool

pytestmark = pytest.mark.anyio

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
FULL_ACCESS = SandboxPolicy.danger_full_access()
NO_SANDBOX = SandboxAvailability(kind="none", reason="test: bwrap disabled")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def context(cwd: Path, policy: SandboxPolicy, sandbox_tmp: Path | None = None) -> ToolContext:
    return ToolContext(
        cwd=cwd,
        sandbox=policy,
        call_id="call-1",
        turn_id="turn-1",
        step_id="step-1",
        env=ENV,
        sandbox_tmp=sandbox_tmp,
    )


async def shell(
    cwd: Path,
    policy: SandboxPolicy = FULL_ACCESS,
    tool: ShellTool | None = None,
    sandbox_tmp: Path | None = None,
    **args: object,
) -> ToolOutput:
    tool = tool or ShellTool()
    return await tool.call(json.dumps(args), context(cwd, policy, sandbox_tmp))


def wall_time_free(text: str) -> str:
    assert re.search(r"^Wall time: \d+\.\d seconds$", text, re.MULTILINE), text
    return re.sub(r"^Wall time: \d+\.\d seconds$", "Wall time: X seconds", text, flags=re.M)


def is_running(pid: int) -> bool:
    """Whether ``pid`` still runs code (a killed orphan may linger as an unreaped zombie)."""
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def alive_after(pids: list[int], timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in pids if is_running(pid)]
        time.sleep(0.05)
    return alive


def read_pids(path: Path) -> list[int]:
    try:
        return [int(line) for line in path.read_text().split()]
    except FileNotFoundError:
        return []


FAMILY = (
    "echo $$ >> pids; sleep 100 & echo $! >> pids; "
    "( sleep 100 & echo $! >> pids; echo $BASHPID >> pids; wait ) & wait"
)


async def test_exit_code_wall_time_and_output_in_codex_format(tmp_path: Path) -> None:
    result = await shell(tmp_path, command="echo hello; echo oops >&2; exit 2")
    assert result.success is False
    assert wall_time_free(result.text) == (
        "Exit code: 2\nWall time: X seconds\nOutput:\nhello\noops\n"
    )
    ok = await shell(tmp_path, command="true")
    assert (ok.success, wall_time_free(ok.text)) == (
        True,
        "Exit code: 0\nWall time: X seconds\nOutput:\n",
    )


async def test_workdir_is_relative_to_the_cwd(tmp_path: Path) -> None:
    (tmp_path / "sub" / "dir").mkdir(parents=True)
    result = await shell(tmp_path, command="pwd", workdir="sub/dir")
    assert result.text.endswith(f"Output:\n{tmp_path}/sub/dir\n")
    absolute = await shell(tmp_path, command="pwd", workdir=str(tmp_path / "sub"))
    assert absolute.text.endswith(f"Output:\n{tmp_path}/sub\n")
    missing = await shell(tmp_path, command="pwd", workdir="nope")
    assert missing == ToolOutput(
        text=f"workdir 'nope' is not a directory (relative paths start at {tmp_path})",
        success=False,
    )


@pytest.mark.parametrize(
    ("payload", "text"),
    [
        ("{}", "Invalid arguments for shell:\n- command: Field required"),
        ('{"command": ""}', "Invalid arguments for shell:\n- command: String should have at least"),
        (
            '{"command": "ls", "timeout_ms": -5}',
            "Invalid arguments for shell:\n- timeout_ms: Input should be greater than 0",
        ),
        ('{"command": ["ls"]}', "Invalid arguments for shell:\n- command: Input should be a valid"),
        ("ls -la", "Invalid arguments for shell: expected a JSON object, got 'ls -la'"),
    ],
)
async def test_malformed_arguments_are_answered_not_raised(
    tmp_path: Path, payload: str, text: str
) -> None:
    result = await ShellTool().call(payload, context(tmp_path, SandboxPolicy.danger_full_access()))
    assert result.success is False
    assert result.text.startswith(text)


async def test_long_output_keeps_head_and_tail_with_a_marker(tmp_path: Path) -> None:
    tool = ShellTool(max_output_bytes=1000)
    result = await shell(tmp_path, tool=tool, command="seq 1 20000")
    full = "".join(f"{i}\n" for i in range(1, 20001))
    head, tail = full.encode()[:500].decode(), full.encode()[-500:].decode()
    dropped = len(full) - 1000
    assert wall_time_free(result.text) == (
        "Exit code: 0\nWall time: X seconds\nTotal output lines: 20000\nOutput:\n"
        f"{head}\n[... {dropped} bytes truncated ...]\n{tail}"
    )


async def test_truncation_counts_bytes_dropped_by_bounded_capture(tmp_path: Path) -> None:
    tool = ShellTool(max_output_bytes=100)  # capture keeps 256 KiB; the tool keeps 100 bytes
    result = await shell(tmp_path, tool=tool, command="head -c 1000000 /dev/zero | tr '\\0' x")
    assert f"[... {1_000_000 - 100} bytes truncated ...]" in result.text
    marker = "\n[... 999900 bytes truncated ...]\n"
    assert result.text.endswith("Output:\n" + "x" * 50 + marker + "x" * 50)


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    result = await shell(tmp_path, command=FAMILY, timeout_ms=500)
    assert result.success is False
    assert wall_time_free(result.text) == (
        "Exit code: 124\nWall time: X seconds\nOutput:\ncommand timed out after 500 milliseconds\n"
    )
    pids = read_pids(tmp_path / "pids")
    assert len(pids) == 4
    assert alive_after(pids) == []


async def test_timeouts_are_capped_by_the_configured_maximum(tmp_path: Path) -> None:
    tool = ShellTool(max_timeout_ms=300)
    started = time.monotonic()
    result = await shell(tmp_path, tool=tool, command="sleep 30", timeout_ms=60_000)
    assert time.monotonic() - started < 10
    assert "command timed out after 300 milliseconds" in result.text


async def test_cancellation_kills_the_whole_process_group(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: shell(tmp_path, command=FAMILY, timeout_ms=60_000))
        for _ in range(250):
            if len(read_pids(pids_file)) >= 4:
                break
            await anyio.sleep(0.02)
        tg.cancel_scope.cancel()
    pids = read_pids(pids_file)
    assert len(pids) == 4
    assert alive_after(pids) == []


async def test_degraded_mode_runs_unsandboxed_only_when_allowed_and_says_so(
    tmp_path: Path,
) -> None:
    tool = ShellTool(availability=NO_SANDBOX)
    allowed = replace(context(tmp_path, SandboxPolicy.workspace_write()), allow_unsandboxed=True)
    result = await tool.call(json.dumps({"command": "echo hi"}), allowed)
    assert wall_time_free(result.text) == (
        "Exit code: 0\nWall time: X seconds\n"
        "Warning: ran without a sandbox (test: bwrap disabled); "
        "the workspace-write policy was not enforced (sandbox.allow_unsandboxed = true)."
        "\nOutput:\nhi\n"
    )
    refused = await shell(tmp_path, SandboxPolicy.workspace_write(), tool=tool, command="touch ran")
    assert refused == ToolOutput(
        "refused to run: no OS sandbox works on this machine (test: bwrap disabled), so the "
        "workspace-write policy cannot be enforced. The user can set "
        "sandbox.allow_unsandboxed = true or choose danger-full-access.",
        False,
    )
    assert not (tmp_path / "ran").exists()


def test_shell_is_a_parallel_capable_function_tool() -> None:
    spec = ShellTool().spec
    assert spec.supports_parallel is True
    entry = spec.to_responses_tool()
    assert {key: entry[key] for key in ("type", "name", "strict")} == {
        "type": "function",
        "name": "shell",
        "strict": False,
    }
    assert entry["parameters"]["required"] == ["command"]
    assert set(entry["parameters"]["properties"]) == {
        "command",
        "workdir",
        "timeout_ms",
        "sandbox_permissions",
        "justification",
    }
    assert "timeout_ms" in entry["description"]


# --- under bubblewrap -------------------------------------------------------------------------


async def bwrap_or_skip() -> None:
    if shutil.which("bwrap", path=ENV["PATH"]) is None:
        pytest.skip("bubblewrap is not installed (CI installs it with apt-get install bubblewrap)")
    availability = await detect_bwrap(search_path=ENV["PATH"])
    if availability.kind != "bwrap":
        pytest.skip(f"bwrap cannot create namespaces here: {availability.reason}")


def read_text(path: Path) -> str:
    return path.read_text()


def listing(directory: Path) -> list[Path]:
    return list(directory.iterdir())


def interfaces(proc_net_dev: str) -> set[str]:
    return {line.split(":")[0].strip() for line in proc_net_dev.splitlines()[2:] if ":" in line}


async def test_bwrap_confines_writes_to_the_workspace_and_session_tmp(tmp_path: Path) -> None:
    await bwrap_or_skip()
    workspace, outside, session_tmp = tmp_path / "ws", tmp_path / "outside", tmp_path / "stmp"
    for directory in (workspace, outside, session_tmp, workspace / ".git"):
        directory.mkdir()
    result = await shell(
        workspace,
        SandboxPolicy.workspace_write(exclude_slash_tmp=True),  # "outside" is under /tmp
        sandbox_tmp=session_tmp,
        command=(
            f"echo in > inside.txt && echo tmp > {session_tmp}/t.txt && echo ok; "
            f"echo out > {outside}/escape.txt || echo outside-refused; "
            "echo hook > .git/hook || echo git-refused"
        ),
    )
    assert "Warning" not in result.text
    assert "ok\n" in result.text
    assert "outside-refused" in result.text
    assert "git-refused" in result.text
    assert "Read-only file system" in result.text
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert (session_tmp / "t.txt").read_text() == "tmp\n"
    assert list(outside.iterdir()) == []
    assert list((workspace / ".git").iterdir()) == []


async def test_bwrap_unshares_the_network_unless_the_policy_allows_it(tmp_path: Path) -> None:
    await bwrap_or_skip()
    host = interfaces(read_text(Path("/proc/net/dev")))
    confined = await shell(tmp_path, SandboxPolicy.workspace_write(), command="cat /proc/net/dev")
    assert interfaces(confined.text.split("Output:\n", 1)[1]) == {"lo"}
    open_net = await shell(
        tmp_path,
        SandboxPolicy.workspace_write(network_access=True),
        command="cat /proc/net/dev",
    )
    assert interfaces(open_net.text.split("Output:\n", 1)[1]) == host


async def test_bwrap_read_only_policy_refuses_writes_even_in_the_workspace(tmp_path: Path) -> None:
    await bwrap_or_skip()
    result = await shell(
        tmp_path, SandboxPolicy.read_only(), command="cat /etc/hostname >/dev/null && touch x"
    )
    assert result.success is False
    assert "Read-only file system" in result.text
    assert listing(tmp_path) == []


async def test_bwrap_timeout_still_kills_everything(tmp_path: Path) -> None:
    await bwrap_or_skip()
    seen: list[int] = []

    async def watch() -> None:
        # Host pids of everything running in the workspace (inside, pids are namespaced).
        for _ in range(100):
            seen[:] = processes_in(tmp_path)
            if len(seen) >= 3:  # bwrap's init, the shell and the sleeps
                return
            await anyio.sleep(0.02)

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        result = await shell(
            tmp_path,
            SandboxPolicy.workspace_write(),
            command="sleep 100 & sleep 100",
            timeout_ms=1000,
        )
    assert "command timed out after 1000 milliseconds" in result.text
    assert len(seen) >= 3
    assert alive_after(seen) == []


def processes_in(directory: Path) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/cwd") == str(directory) and is_running(int(entry)):
                    found.append(int(entry))
            except OSError:
                continue
    return found
