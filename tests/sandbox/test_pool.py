"""The long-lived sandbox of a session: same results as a per-command run, one sandbox for many
commands, a fresh one when the policy changes or the old one is gone, nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import msgspec.structs
import pytest

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox import pool as pool_module
from mini_codex.sandbox import server as server_module
from mini_codex.sandbox.bwrap import SandboxAvailability, detect_bwrap
from mini_codex.sandbox.exec import ExecResult, shell_argv
from mini_codex.sandbox.landlock import detect_landlock
from mini_codex.sandbox.launch import SandboxRequest, confine
from mini_codex.sandbox.pool import SandboxPool

pytestmark = pytest.mark.anyio

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ENV = {"PATH": PATH, "LANG": "C.UTF-8"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def bwrap() -> SandboxAvailability:
    found = await detect_bwrap(search_path=PATH)
    if found.kind != "bwrap":
        pytest.skip(f"bwrap does not work here: {found.reason}")
    return found


@pytest.fixture(params=["bwrap", "landlock"])
async def backend(request: pytest.FixtureRequest) -> SandboxAvailability:
    """Either confinement: the session server works alike under both."""
    found = await (
        detect_bwrap(search_path=PATH) if request.param == "bwrap" else detect_landlock()
    )
    if found.kind != request.param:
        pytest.skip(f"{request.param} does not work here: {found.reason}")
    return found


@pytest.fixture
async def pool() -> AsyncIterator[SandboxPool]:
    sandboxes = SandboxPool()
    try:
        yield sandboxes
    finally:
        await sandboxes.aclose()


@pytest.fixture
def workspace() -> Path:
    # Not under /tmp: /tmp is a writable root of its own.
    path = Path(os.path.realpath("/var/tmp")) / f"mini-codex-pool-{uuid.uuid4().hex}"
    (path / "src").mkdir(parents=True)
    yield path  # type: ignore[misc]
    subprocess.run(["rm", "-rf", str(path)], check=True)


def request(
    workspace: Path,
    bwrap: SandboxAvailability,
    policy: SandboxPolicy | None = None,
    env: dict[str, str] | None = None,
) -> SandboxRequest:
    return SandboxRequest(
        policy=policy or SandboxPolicy.workspace_write(),
        cwd=workspace,
        backend=bwrap,
        env=env or ENV,
    )


async def run(
    pool: SandboxPool,
    req: SandboxRequest,
    command: str,
    *,
    workdir: Path | None = None,
    seconds: float = 10,
    **kwargs: object,
) -> ExecResult:
    prepared = confine(shell_argv("/bin/bash", command), req, workdir or req.cwd)
    return await pool.run(
        prepared,
        req,
        workdir or req.cwd,
        env=req.env,
        timeout_s=seconds,
        **kwargs,  # type: ignore[arg-type]
    )


def same(result: ExecResult) -> ExecResult:
    """The result without its wall time (compare whole results otherwise)."""
    return msgspec.structs.replace(result, wall_time_s=0.0)


def is_running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def dead(pids: list[int], seconds: float = 5.0) -> list[int]:
    """The pids still running after ``seconds`` (polling: there is nothing to wait on)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if is_running(pid)]
        if not alive:
            return []
        await anyio.sleep(0.05)
    return [pid for pid in pids if is_running(pid)]


def marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline and is_running(int(entry.name)):
                found.append(int(entry.name))
    return found


SEMANTICS = {
    "exit code and merged output": "echo out; echo err >&2; echo out2; exit 3",
    "killed by a signal": "echo before; kill -TERM $$",
    "no trailing newline": "printf 'a\\nb'",
    "long output is bounded": "head -c 300000 /dev/zero | tr '\\0' 'x'; echo; seq 1 2000",
    "stdin is /dev/null": "cat; echo done",
}


@pytest.mark.parametrize("name", sorted(SEMANTICS))
async def test_results_are_those_of_a_per_command_run(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path, name: str
) -> None:
    req = request(workspace, backend)
    seen: list[bytes] = []
    served = await run(pool, req, SEMANTICS[name], max_capture_bytes=4096, on_output=seen.append)
    per_command = SandboxPool(long_lived=False)
    alone = await run(per_command, req, SEMANTICS[name], max_capture_bytes=4096)
    assert same(served) == same(alone)
    assert sum(len(chunk) for chunk in seen) == len(served.output) + served.omitted_bytes
    assert pool.started == 1


async def test_one_sandbox_runs_many_commands_and_tmp_is_shared(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, backend)
    name = f"/tmp/mini-codex-pool-{uuid.uuid4().hex}"
    try:
        first = await run(pool, req, f"echo kept > {name}; echo made > src/made")
        second = await run(pool, req, f"cat {name} made; pwd", workdir=workspace / "src")
    finally:
        os.unlink(name)
    assert (first.exit_code, second.exit_code, second.text()) == (
        0,
        0,
        f"kept\nmade\n{workspace}/src\n",
    )
    assert pool.started == 1


async def test_the_environment_is_exactly_the_requests(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    env = {"PATH": PATH, "ONLY": "this"}
    req = request(workspace, backend, env=env)
    prepared = confine(["env", "-0"], req, workspace)
    result = await pool.run(prepared, req, workspace, env=env, timeout_s=10)
    pairs = dict(item.split("=", 1) for item in result.text().split("\0") if item)
    assert pairs == env


async def test_a_request_too_large_for_one_packet_runs_with_a_confinement_of_its_own(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    env = {"PATH": PATH, **{f"BIG{i}": "x" * 100_000 for i in range(4)}}
    req = request(workspace, backend, env=env)
    result = await run(pool, req, "echo ${#BIG0} ${#BIG3}; echo x > /etc/escaped")
    assert (result.exit_code, result.text().splitlines()[0]) == (1, "100000 100000")
    assert "Read-only file system" in result.text() or "Permission denied" in result.text()


async def test_a_missing_program_or_directory_raises_oserror(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, backend)
    with pytest.raises(FileNotFoundError):
        await pool.run(
            confine(["no-such-program"], req, workspace), req, workspace, env=ENV, timeout_s=5
        )
    with pytest.raises(FileNotFoundError):
        await pool.run(
            confine(["true"], req, workspace), req, workspace / "gone", env=ENV, timeout_s=5
        )
    assert (await run(pool, req, "echo still")).text() == "still\n"


async def test_what_subprocess_refuses_is_refused_alike_and_the_sandbox_stays(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, backend)
    for argv, env in ((["echo", "a\0b"], ENV), (["true"], {**ENV, "A=B": "x"})):
        prepared = confine(argv, req, workspace)
        with pytest.raises(ValueError, match=r"null byte|variable name") as served:
            await pool.run(prepared, req, workspace, env=env, timeout_s=5)
        with pytest.raises(ValueError, match=r"null byte|variable name") as local:
            await SandboxPool(long_lived=False).run(prepared, req, workspace, env=env, timeout_s=5)
        assert str(served.value) == str(local.value)
    assert ((await run(pool, req, "echo still")).text(), pool.started) == ("still\n", 1)


async def test_timeout_kills_the_group_and_background_children_die_with_the_call(
    pool: SandboxPool, bwrap: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, bwrap)
    marker = f"pool-{uuid.uuid4().hex}"
    script = f"sleep 300; : {marker}"
    timed = await run(pool, req, f"sh -c '{script}' & echo started; wait", seconds=0.5)
    assert (timed.exit_code, timed.timed_out, timed.text()) == (124, True, "started\n")
    left = await run(
        pool,
        req,
        f"(setsid sh -c '{script}' &); (nohup sh -c '{script}' >/dev/null 2>&1 &); "
        f"sh -c '{script}' & disown; echo started",
    )
    assert (left.exit_code, left.text()) == (0, "started\n")
    assert await dead(marked(marker)) == []
    assert marked(marker) == []
    assert pool.started == 1


async def test_cancellation_kills_the_command(
    pool: SandboxPool, bwrap: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, bwrap)
    marker = f"pool-{uuid.uuid4().hex}"
    with anyio.move_on_after(0.5):
        await run(pool, req, f"setsid sh -c 'sleep 300; : {marker}' & sleep 300")
    assert await dead(marked(marker)) == []
    assert (await run(pool, req, "echo next")).text() == "next\n"


async def test_concurrent_commands_share_the_sandbox_without_killing_each_other(
    pool: SandboxPool, bwrap: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, bwrap)
    results: dict[str, ExecResult] = {}

    async def one(name: str, command: str) -> None:
        results[name] = await run(pool, req, command)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "slow", "sleep 1; echo slow")
        await anyio.sleep(0.3)
        tg.start_soon(one, "quick", "setsid sleep 100 & echo quick")
    assert {name: (r.exit_code, r.text()) for name, r in results.items()} == {
        "slow": (0, "slow\n"),
        "quick": (0, "quick\n"),
    }
    assert pool.started == 1


async def test_a_command_that_kills_the_server_ends_its_sandbox_and_the_next_gets_a_new_one(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, backend)
    await run(pool, req, "true")
    first = pool.server
    assert first is not None
    killed = await run(pool, req, "kill -9 $PPID; sleep 5; echo survived")
    assert (killed.exit_code, killed.text()) == (137, "")
    after = await run(pool, req, "echo fresh")
    assert (after.exit_code, after.text(), pool.started) == (0, "fresh\n", 2)
    assert await dead([first.pid]) == []


async def test_a_stopped_server_fails_only_the_calls_in_flight(
    pool: SandboxPool,
    backend: SandboxAvailability,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server_module, "KILL_GRACE_S", 0.3)
    req = request(workspace, backend)
    stopped = await run(pool, req, "sleep 0.1; kill -STOP $PPID; echo stopped", seconds=0.5)
    assert (stopped.exit_code, stopped.timed_out, stopped.text()) == (124, True, "stopped\n")
    after = await run(pool, req, "echo fresh")
    assert (after.exit_code, after.text(), pool.started) == (0, "fresh\n", 2)


async def test_a_server_stopped_before_it_reports_the_start_does_not_hang_the_call(
    pool: SandboxPool,
    backend: SandboxAvailability,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server_module, "KILL_GRACE_S", 0.3)
    monkeypatch.setattr(pool_module, "START_TIMEOUT_S", 1.0)
    req = request(workspace, backend)
    with anyio.fail_after(5):
        stopped = await run(pool, req, "kill -STOP $PPID; echo stopped", seconds=0.5)
    # Stopped before or after it wrote the start: killed with the sandbox, or timed out.
    assert (stopped.exit_code, stopped.timed_out) in ((137, False), (124, True))
    after = await run(pool, req, "echo fresh")
    assert (after.exit_code, after.text(), pool.started) == (0, "fresh\n", 2)


async def test_a_command_cannot_reach_into_the_server(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, backend)
    result = await run(
        pool,
        req,
        "S=$PPID; for f in /proc/$S/fd/* /proc/$S/environ /proc/$S/mem; do "
        "cat $f </dev/null >/dev/null 2>&1 && echo OPENED $f; done; "
        "python3 -c 'import ctypes,sys; libc=ctypes.CDLL(None); "
        "sys.exit(libc.ptrace(16, int(sys.argv[1]), 0, 0))' $S && echo PTRACED; echo checked",
    )
    assert result.text() == "checked\n"


async def test_a_new_policy_or_cwd_gets_a_new_sandbox_and_the_old_one_ends(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    await run(pool, request(workspace, backend), "true")
    first = pool.server
    assert first is not None
    read_only = await run(
        pool, request(workspace, backend, SandboxPolicy.read_only()), "echo x > src/x"
    )
    assert read_only.exit_code == 1
    assert not (workspace / "src" / "x").exists()
    assert await dead([first.pid]) == []
    second = pool.server
    assert second is not None
    moved = await run(pool, request(workspace / "src", backend), "echo x > x && pwd")
    assert (moved.exit_code, moved.text()) == (0, f"{workspace}/src\n")
    assert await dead([second.pid]) == []
    assert pool.started == 3


async def test_a_git_directory_made_after_the_sandbox_started_is_protected_next_command(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, backend)
    await run(pool, req, "true")
    (workspace / ".git" / "hooks").mkdir(parents=True)  # e.g. an approved unsandboxed git init
    result = await run(pool, req, "echo pwned > .git/hooks/pre-commit")
    assert result.exit_code == 1
    assert list((workspace / ".git" / "hooks").iterdir()) == []
    assert pool.started == 2


async def test_a_workspace_deleted_and_made_again_gets_a_new_sandbox(
    pool: SandboxPool, backend: SandboxAvailability, workspace: Path
) -> None:
    req = request(workspace, backend)
    await run(pool, req, "true")
    await anyio.run_process(["rm", "-rf", str(workspace)])
    os.mkdir(workspace)
    made = await run(pool, req, "echo here > f")
    assert (made.exit_code, made.text(), pool.started) == (0, "", 2)
    assert os.listdir(workspace) == ["f"]


async def test_closing_the_pool_ends_its_sandbox(
    bwrap: SandboxAvailability, workspace: Path
) -> None:
    pool = SandboxPool()
    marker = f"pool-{uuid.uuid4().hex}"
    async with anyio.create_task_group() as tg:
        tg.start_soon(run, pool, request(workspace, bwrap), f"sleep 300; : {marker}")
        for _ in range(250):  # polling: the sandbox gives no signal when the command runs
            if marked(marker):
                break
            await anyio.sleep(0.02)
        server = pool.server
        assert server is not None
        await pool.aclose()
    assert await dead([server.pid, *marked(marker)]) == []


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def test_no_sandbox_outlives_a_killed_mini_codex(tmp_path: Path) -> None:
    found = anyio.run(lambda: detect_bwrap(search_path=PATH))
    if found.kind != "bwrap":
        pytest.skip(f"bwrap does not work here: {found.reason}")
    marker = f"pool-{uuid.uuid4().hex}"
    script = tmp_path / "s.jsonl"
    call = {
        "type": "function_call",
        "name": "shell",
        "arguments": {"command": f"sleep 300; : {marker}", "timeout_ms": 300_000},
    }
    script.write_text(json.dumps({"output": [call]}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(tmp_path / "home")
    mini_codex = Path(sys.executable).parent / "mini-codex"
    process = subprocess.Popen(
        [
            str(mini_codex),
            *("exec", "--model", f"scripted:{script}", "-s", "workspace-write"),
            *("-c", "tools.unified_exec=false", "--cd", str(tmp_path), "wait"),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not marked(marker):
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.05)
        family = descendants(process.pid)
        servers = [pid for pid in family if b"server_main.py" in cmdline(pid)]
        assert servers, "no sandbox server among the agent's descendants"
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        process.kill()
        process.communicate()
    deadline = time.monotonic() + 5
    while any(is_running(pid) for pid in family) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in family if is_running(pid)] == []


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
