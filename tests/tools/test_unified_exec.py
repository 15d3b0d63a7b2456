"""Unified exec end to end: real PTYs and real processes (``exec_command`` + ``write_stdin``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mini_codex.policy.approval import Reject, assess_exec
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.bwrap import SandboxAvailability, detect_bwrap
from mini_codex.sandbox.exec import shell_argv
from mini_codex.tools.base import ToolContext, ToolOutput
from mini_codex.tools.truncate import truncate_middle_bytes
from mini_codex.tools.unified_exec import ExecCommandTool, WriteStdinTool, unified_exec_tools
from process_groups import group_alive, group_gone

pytestmark = pytest.mark.anyio

ENV = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "TERM": "dumb"}
NO_SANDBOX = SandboxAvailability(kind="none", reason="test: no sandbox needed")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def context(cwd: Path, policy: SandboxPolicy | None = None, **kw: object) -> ToolContext:
    return ToolContext(
        cwd=cwd,
        sandbox=policy or SandboxPolicy.danger_full_access(),
        call_id="c1",
        turn_id="t1",
        step_id="s1",
        env=ENV,
        sandbox_backend=kw.pop("backend", NO_SANDBOX),  # type: ignore[arg-type]
        approval_policy="never",
    )


def shape(output: ToolOutput) -> str:
    """The output text with its random chunk id and wall time replaced."""
    text = re.sub(r"^Chunk ID: [0-9a-f]{6}$", "Chunk ID: X", output.text, flags=re.M)
    return re.sub(r"^Wall time: \d+\.\d{4} seconds$", "Wall time: T", text, flags=re.M)


async def start(tool: ExecCommandTool, ctx: ToolContext, cmd: str, **args: object) -> ToolOutput:
    return await tool.call(json.dumps({"cmd": cmd, **args}), ctx)


async def write(
    tool: WriteStdinTool, ctx: ToolContext, sid: int, chars: str, ms: int
) -> ToolOutput:
    payload = {"session_id": sid, "chars": chars, "yield_time_ms": ms}
    return await tool.call(json.dumps(payload), ctx)


async def test_a_short_command_returns_its_exit_code_and_output(tmp_path: Path) -> None:
    exec_command, _ = unified_exec_tools()
    result = await start(exec_command, context(tmp_path), "echo hello; exit 3")
    assert shape(result) == (
        "Chunk ID: X\nWall time: T\nProcess exited with code 3\n"
        "Original token count: 2\nOutput:\nhello\n"
    )
    assert (result.success, result.details) == (False, {"output": "hello\n", "exit_code": 3})
    assert len(exec_command.sessions) == 0


async def drive(
    tool: WriteStdinTool, ctx: ToolContext, sid: int, chars: str, until: str, seen: str = ""
) -> tuple[str, ToolOutput]:
    """Write ``chars``, then poll until the output so far ends with ``until`` or the command
    exits (a loaded machine may need several polls); the output collected and the last result."""
    collected = seen
    result = await write(tool, ctx, sid, chars, 200)
    with anyio.fail_after(30):
        while True:
            details = result.details or {}
            collected += str(details.get("output", ""))
            if collected.endswith(until) or "session_id" not in details:
                return collected, result
            result = await write(tool, ctx, sid, "", 200)


async def test_an_interactive_program_is_driven_through_write_stdin(tmp_path: Path) -> None:
    exec_command, write_stdin = unified_exec_tools()
    ctx = context(tmp_path)
    first = await start(exec_command, ctx, "python3 -i -q", yield_time_ms=300)
    assert "Process running with session ID 1\n" in first.text
    assert first.details is not None
    assert first.details["session_id"] == 1
    prompt, _ = await drive(write_stdin, ctx, 1, "", ">>> ", str(first.details["output"]))
    assert prompt == ">>> "
    answer, running = await drive(write_stdin, ctx, 1, "print(6 * 7)\n", ">>> ")
    assert answer == "42\n>>> "
    assert running.details is not None
    assert running.details["session_id"] == 1
    rest, last = await drive(write_stdin, ctx, 1, "exit()\n", "never printed")
    assert (rest, last.details) == ("", {"output": "", "exit_code": 0})
    gone = await write(write_stdin, ctx, 1, "", 100)
    assert gone == ToolOutput.failure(
        "write_stdin: no running session 1 (it exited or never existed)"
    )


async def test_tty_true_echoes_typed_input(tmp_path: Path) -> None:
    exec_command, write_stdin = unified_exec_tools()
    ctx = context(tmp_path)
    await start(exec_command, ctx, "cat", yield_time_ms=0, tty=True)
    echoed, _ = await drive(write_stdin, ctx, 1, "abc\n", "abc\r\nabc\r\n")
    assert echoed == "abc\r\nabc\r\n"
    await exec_command.aclose()


async def test_a_long_command_yields_then_finishes_on_a_later_poll(tmp_path: Path) -> None:
    exec_command, write_stdin = unified_exec_tools()
    ctx = context(tmp_path)
    first = await start(exec_command, ctx, "echo start; sleep 2; echo done", yield_time_ms=1000)
    assert first.details == {"output": "start\n", "session_id": 1}
    assert first.success is True
    final = await write(write_stdin, ctx, 1, "", 20_000)
    assert final.details == {"output": "done\n", "exit_code": 0}
    assert "Process exited with code 0\n" in final.text
    assert len(exec_command.sessions) == 0


async def test_at_most_max_sessions_run_at_once(tmp_path: Path) -> None:
    exec_command, _write_stdin = unified_exec_tools(2)
    ctx = context(tmp_path)
    for _ in range(2):
        await start(exec_command, ctx, "sleep 30", yield_time_ms=0)
    refused = await start(exec_command, ctx, "echo no", yield_time_ms=0)
    assert refused == ToolOutput.failure(
        "exec_command: 2 commands are already running (the limit); wait for one to exit "
        "(write_stdin) before starting another"
    )
    await exec_command.aclose()
    assert len(exec_command.sessions) == 0


async def test_closing_kills_every_process_group(tmp_path: Path) -> None:
    exec_command, _ = unified_exec_tools()
    ctx = context(tmp_path)
    await start(exec_command, ctx, "sleep 60 & sleep 60", yield_time_ms=200)
    await start(exec_command, ctx, "cat", yield_time_ms=0)
    pgids = exec_command.sessions.pids()
    assert len(pgids) == 2
    assert all(group_alive(pgid) for pgid in pgids)
    await exec_command.aclose()
    assert [await group_gone(pgid) for pgid in pgids] == [True, True]
    refused = await start(exec_command, ctx, "echo late", yield_time_ms=0)
    assert refused == ToolOutput.failure("exec_command: the session is closing")


async def test_bad_arguments_and_workdir_are_answered(tmp_path: Path) -> None:
    exec_command, write_stdin = unified_exec_tools()
    ctx = context(tmp_path)
    missing = await start(exec_command, ctx, "true", workdir="nope")
    assert missing == ToolOutput.failure(
        f"workdir 'nope' is not a directory (relative paths start at {tmp_path})"
    )
    bad = await write_stdin.call(json.dumps({"chars": "x"}), ctx)
    assert bad.success is False
    assert "session_id" in bad.text


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="mini-codex-uexec-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_the_sandbox_applies_under_workspace_write(tmp_path: Path, outside: Path) -> None:
    backend = await detect_bwrap(search_path=ENV["PATH"])
    if backend.kind != "bwrap":
        pytest.skip(f"bubblewrap does not work here: {backend.reason}")
    exec_command, _ = unified_exec_tools()
    ctx = context(tmp_path, SandboxPolicy.workspace_write(), backend=backend)
    inside = await start(exec_command, ctx, "touch inside && echo ok", yield_time_ms=5000)
    assert inside.details == {"output": "ok\n", "exit_code": 0}
    assert (tmp_path / "inside").exists()
    denied = await start(exec_command, ctx, f"touch {outside}/f", yield_time_ms=5000)
    assert denied.details is not None
    assert denied.details["exit_code"] == 1
    assert "Read-only file system" in denied.details["output"]
    assert not (outside / "f").exists()


@pytest.mark.parametrize("long_lived", [True, False])
async def test_sandboxed_sessions_are_interactive_and_die_with_the_session(
    tmp_path: Path, long_lived: bool
) -> None:
    """In the session's long-lived sandbox (its server gets the PTY) as with a bwrap per
    command: typed input, tty echo, exit codes, and nothing left once the session closes."""
    backend = await detect_bwrap(search_path=ENV["PATH"])
    if backend.kind != "bwrap":
        pytest.skip(f"bubblewrap does not work here: {backend.reason}")
    exec_command, write_stdin = unified_exec_tools()
    exec_command.sandboxes.long_lived = long_lived
    ctx = context(tmp_path, SandboxPolicy.workspace_write(), backend=backend)
    marker = f"uexec-{os.urandom(6).hex()}"
    try:
        first = await start(exec_command, ctx, "python3 -i -q", yield_time_ms=300)
        assert first.details is not None
        assert first.details["session_id"] == 1
        await drive(write_stdin, ctx, 1, "", ">>> ", str(first.details["output"]))
        answer, _ = await drive(write_stdin, ctx, 1, "print(6 * 7)\n", ">>> ")
        assert answer == "42\n>>> "
        await start(exec_command, ctx, "cat", yield_time_ms=0, tty=True)
        echoed, _ = await drive(write_stdin, ctx, 2, "abc\n", "abc\r\nabc\r\n")
        assert echoed == "abc\r\nabc\r\n"
        background = await start(
            exec_command, ctx, f"setsid sh -c 'sleep 300; : {marker}' & exit 4", yield_time_ms=3000
        )
        assert background.details == {"output": "", "exit_code": 4}
        running = await start(exec_command, ctx, f"sh -c 'sleep 300; : {marker}'", yield_time_ms=0)
        assert running.details is not None
        assert running.details["session_id"] == 4
        assert exec_command.sandboxes.started == (1 if long_lived else 0)
    finally:
        await exec_command.aclose()
    for _ in range(100):  # polling: killed processes take a moment to disappear
        if not marked(marker):
            break
        await anyio.sleep(0.05)
    assert marked(marker) == []


def marked(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


async def test_max_output_tokens_keeps_head_and_tail(tmp_path: Path) -> None:
    exec_command, _ = unified_exec_tools()
    result = await start(exec_command, context(tmp_path), "seq 1 2000", max_output_tokens=10)
    full = "".join(f"{n}\n" for n in range(1, 2001)).encode()
    assert shape(result) == (
        "Chunk ID: X\nWall time: T\nProcess exited with code 0\n"
        f"Original token count: {(len(full) + 3) // 4}\nOutput:\n" + truncate_middle_bytes(full, 40)
    )


async def test_escalation_follows_the_same_policy_as_shell(tmp_path: Path) -> None:
    exec_command, _ = unified_exec_tools()
    ctx = context(tmp_path, SandboxPolicy.workspace_write())
    argv = shell_argv(ctx.shell, "echo hi")
    verdict = assess_exec(argv, approval="never", sandbox="workspace-write", escalated=True)
    assert isinstance(verdict, Reject)
    refused = await start(
        exec_command, ctx, "echo hi", sandbox_permissions="require_escalated", justification="x"
    )
    assert refused == ToolOutput.failure(f"Command rejected: {verdict.reason}")
    assert len(exec_command.sessions) == 0
