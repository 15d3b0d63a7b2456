"""Running commands in their own process group: exit codes, output, timeout and cancellation."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from mini_codex.sandbox.exec import TIMEOUT_EXIT_CODE, ExecResult, run_command, shell_argv

pytestmark = pytest.mark.anyio

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def is_running(pid: int) -> bool:
    """Whether ``pid`` still runs code. A killed child of a non-reaping init stays a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_dead(pids: list[int], timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if is_running(pid)]
        if not alive:
            return []
        time.sleep(0.05)
    return alive


def read_pids(path: Path) -> list[int]:
    try:
        return [int(line) for line in path.read_text().split()]
    except FileNotFoundError:
        return []


async def wait_for_pids(path: Path, count: int) -> None:
    """Poll (the child writes the file; there is nothing to wait on) until ``count`` pids."""
    for _ in range(250):
        if len(read_pids(path)) >= count:
            return
        await anyio.sleep(0.02)
    raise AssertionError(f"{path} never listed {count} pids")


# The shell, a background sleep, a subshell and its own background sleep: four processes.
FAMILY = (
    "echo $$ >> {pids}; sleep 100 & echo $! >> {pids}; "
    "( sleep 100 & echo $! >> {pids}; echo $BASHPID >> {pids}; wait ) & "
    "wait"
)


async def run(command: str, cwd: Path, **kwargs: float) -> ExecResult:
    return await run_command(
        shell_argv("/bin/bash", command), cwd=cwd, env=ENV, timeout_s=kwargs.get("timeout", 10)
    )


async def test_exit_codes_and_merged_output(tmp_path: Path) -> None:
    result = await run("echo out; echo err >&2; echo out2; exit 3", tmp_path)
    assert (result.exit_code, result.output, result.timed_out) == (3, b"out\nerr\nout2\n", False)
    assert result.total_lines == 3
    assert result.text() == "out\nerr\nout2\n"
    assert (await run("kill -TERM $$", tmp_path)).exit_code == 128 + 15


async def test_the_environment_is_exactly_the_one_given(tmp_path: Path) -> None:
    result = await run_command(
        shell_argv("/bin/bash", 'echo "$FOO ${HOME-unset}"; pwd'),
        cwd=tmp_path,
        env={"FOO": "bar"},
        timeout_s=5,
    )
    assert result.output == f"bar unset\n{tmp_path}\n".encode()


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    result = await run(FAMILY.format(pids=pids_file), tmp_path, timeout=0.5)
    assert result.timed_out
    assert result.exit_code == TIMEOUT_EXIT_CODE
    pids = read_pids(pids_file)
    assert len(pids) == 4
    assert wait_until_dead(pids) == []


async def test_cancellation_kills_the_whole_process_group(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    with anyio.move_on_after(5) as outer:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, FAMILY.format(pids=pids_file), tmp_path)
            await wait_for_pids(pids_file, 4)
            tg.cancel_scope.cancel()
    assert not outer.cancelled_caught
    assert wait_until_dead(read_pids(pids_file)) == []


async def test_background_children_do_not_outlive_a_finished_command(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    started = time.monotonic()
    result = await run_command(
        shell_argv("/bin/bash", f"sleep 100 & echo $! > {pids_file}; echo done"),
        cwd=tmp_path,
        env=ENV,
        timeout_s=10,
        drain_timeout_s=0.2,
    )
    assert (result.exit_code, result.output, result.timed_out) == (0, b"done\n", False)
    assert time.monotonic() - started < 5
    assert wait_until_dead(read_pids(pids_file)) == []


async def test_capture_keeps_head_and_tail_and_counts_what_it_dropped(tmp_path: Path) -> None:
    lines = [f"line {i:05d}" for i in range(20_000)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    full = (tmp_path / "big.txt").read_bytes()
    result = await run_command(
        ["cat", "big.txt"], cwd=tmp_path, env=ENV, timeout_s=10, max_capture_bytes=1000
    )
    assert result.output == full[:500] + full[-500:]
    assert result.omitted_bytes == len(full) - 1000
    assert result.total_lines == 20_000


async def test_a_missing_program_or_directory_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await run_command(["/nonexistent/program"], cwd=tmp_path, env=ENV, timeout_s=1)
    with pytest.raises(FileNotFoundError):
        await run_command(["true"], cwd=tmp_path / "missing", env=ENV, timeout_s=1)


async def test_on_output_sees_every_chunk_before_capture_bounds_it(tmp_path: Path) -> None:
    lines = [f"line {i:05d}" for i in range(20_000)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    seen: list[bytes] = []
    result = await run_command(
        ["cat", "big.txt"],
        cwd=tmp_path,
        env=ENV,
        timeout_s=10,
        max_capture_bytes=1000,
        on_output=seen.append,
    )
    assert b"".join(seen) == (tmp_path / "big.txt").read_bytes()
    assert len(result.output) == 1000


async def test_on_output_streams_while_the_command_still_runs(tmp_path: Path) -> None:
    first_chunk_at: list[float] = []
    started = time.monotonic()

    def note(chunk: bytes) -> None:
        if not first_chunk_at:
            first_chunk_at.append(time.monotonic() - started)

    result = await run_command(
        shell_argv("bash", "echo early; sleep 1; echo late"),
        cwd=tmp_path,
        env=ENV,
        timeout_s=10,
        on_output=note,
    )
    assert result.output == b"early\nlate\n"
    assert len(first_chunk_at) == 1
    assert first_chunk_at[0] < result.wall_time_s - 0.5
