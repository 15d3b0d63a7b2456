"""Run one command in its own process group, with a timeout, capturing stdout+stderr merged.

* The child starts a new session (``start_new_session=True``), so its PID is the process-group
  id of everything it spawns (unless something calls ``setsid`` itself).
* Timeout: the whole group gets SIGKILL; the result says ``timed_out`` and the exit code is 124
  (the conventional timeout code Codex also reports).
* Cancellation of the calling task: the whole group gets SIGKILL before the cancellation
  propagates (the reap is shielded, so no zombie is left behind).
* Normal exit: output is drained for ``drain_timeout_s`` more (a background child may still hold
  the pipe), then whatever is left in the group is killed, so no process outlives its call.
* A child killed by signal N reports exit code 128 + N, as a shell would.
* ``on_output`` (optional) sees every chunk as it is read, before capture bounds it: the seam
  a UI uses for a live output tail. It must not block; an exception from it is the caller's bug
  and propagates.
* Capture is bounded: past ``max_capture_bytes`` only the head and the tail are kept and the
  number of bytes dropped in between is reported (``omitted_bytes``).

The environment is exactly ``env`` (only ``cli/`` decides what is inherited from ``os.environ``).
What does not belong here: deciding whether or how to sandbox (``policy.py``, ``bwrap.py``),
formatting output for the model (``tools/shell.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, Process

__all__ = [
    "DEFAULT_MAX_CAPTURE_BYTES",
    "TIMEOUT_EXIT_CODE",
    "Child",
    "ExecResult",
    "LocalProcess",
    "run_command",
    "shell_argv",
    "supervise",
]

TIMEOUT_EXIT_CODE = 124
DEFAULT_MAX_CAPTURE_BYTES = 8 * 1024 * 1024
_READ_CHUNK = 64 * 1024


class ExecResult(msgspec.Struct, frozen=True):
    """The outcome of one command."""

    exit_code: int
    output: bytes
    """stdout and stderr interleaved as written (head + tail if capture overflowed)."""
    wall_time_s: float
    timed_out: bool
    omitted_bytes: int = 0
    """Bytes dropped from the middle of ``output`` because capture was bounded."""
    total_lines: int = 0
    """Lines in the full output (counted while streaming, dropped bytes included)."""

    def text(self) -> str:
        """``output`` decoded as UTF-8 (invalid bytes replaced)."""
        return self.output.decode("utf-8", "replace")


def shell_argv(shell: str, command: str) -> list[str]:
    """The argv running ``command`` with ``shell`` (``bash -c``; not a login shell)."""
    return [shell, "-c", command]


class _Capture:
    """Head + tail bounded byte buffer that also counts lines."""

    def __init__(self, limit: int, on_output: Callable[[bytes], None] | None = None) -> None:
        self._on_output = on_output
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        self.newlines = 0
        self.last_byte: int | None = None
        self.eof = anyio.Event()

    def feed(self, chunk: bytes) -> None:
        if self._on_output is not None:
            self._on_output(chunk)
        self.total += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.last_byte = chunk[-1]
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > self._tail_limit:
                del self._tail[: len(self._tail) - self._tail_limit]

    @property
    def output(self) -> bytes:
        return bytes(self._head + self._tail)

    @property
    def lines(self) -> int:
        if self.total == 0:
            return 0
        return self.newlines + (0 if self.last_byte == ord("\n") else 1)


async def _pump(stream: ByteReceiveStream, capture: _Capture) -> None:
    try:
        while True:
            try:
                chunk = await stream.receive(_READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            capture.feed(chunk)
    finally:
        capture.eof.set()


async def _drain(stream: ByteReceiveStream) -> None:
    try:
        while True:
            await stream.receive(_READ_CHUNK)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        return


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _exit_code(returncode: int | None) -> int:
    if returncode is None:
        return -1
    return 128 - returncode if returncode < 0 else returncode


class Child(Protocol):
    """A started command as ``supervise`` drives it (a local process, or one a sandbox server
    started)."""

    @property
    def stdout(self) -> ByteReceiveStream: ...

    @property
    def returncode(self) -> int | None:
        """Negative: killed by that signal; None while it runs (or when it is unknown)."""
        ...

    async def wait(self) -> None:
        """Until the command's first process exits."""
        ...

    def kill_group(self) -> None:
        """SIGKILL to the command's process group (never blocks)."""
        ...

    async def finish(self, drain_timeout_s: float) -> None:
        """The call is over: kill what is left, reap, drain and close ``stdout`` (shielded)."""
        ...


class LocalProcess:
    """A command started on this machine in a process group of its own (``start_new_session``):
    what a local ``Child`` and a local PTY command (``tools.unified_exec``) share."""

    def __init__(self, process: Process) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def wait(self) -> None:
        await self._process.wait()

    def kill_group(self) -> None:
        _kill_group(self._process.pid)


class _LocalChild(LocalProcess):
    def __init__(self, process: Process) -> None:
        super().__init__(process)
        stdout = process.stdout
        assert stdout is not None
        self._stdout = stdout

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    async def finish(self, drain_timeout_s: float) -> None:
        _kill_group(self._process.pid)
        await self._process.wait()
        # Read the pipe to its end (after a cancellation the sandboxed children are still
        # dying), so its transport is closed before we return, not at garbage collection.
        with anyio.move_on_after(drain_timeout_s):
            await _drain(self._stdout)
        await self._stdout.aclose()
        await self._process.aclose()


async def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float | None,
    max_capture_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
    drain_timeout_s: float = 1.0,
    on_output: Callable[[bytes], None] | None = None,
) -> ExecResult:
    """Run ``argv`` in ``cwd`` in a new process group; see the module docstring for semantics.

    Raises ``OSError`` when the program cannot be started (missing executable, bad cwd).
    """
    if not argv:
        raise ValueError("empty argv")
    started = time.monotonic()
    process = await anyio.open_process(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    return await supervise(
        _LocalChild(process),
        started=started,
        timeout_s=timeout_s,
        max_capture_bytes=max_capture_bytes,
        drain_timeout_s=drain_timeout_s,
        on_output=on_output,
    )


async def supervise(
    child: Child,
    *,
    started: float,
    timeout_s: float | None,
    max_capture_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
    drain_timeout_s: float = 1.0,
    on_output: Callable[[bytes], None] | None = None,
) -> ExecResult:
    """Drive a started command to its end with ``run_command``'s semantics (module docstring)."""
    capture = _Capture(max_capture_bytes, on_output)
    timed_out = False
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pump, child.stdout, capture)
            with anyio.move_on_after(timeout_s) as deadline:
                await child.wait()
            if deadline.cancelled_caught:
                timed_out = True
                child.kill_group()
                await child.wait()
            with anyio.move_on_after(drain_timeout_s):
                await capture.eof.wait()
            # Whatever still runs in the group (background children) dies with the call.
            child.kill_group()
            with anyio.move_on_after(drain_timeout_s):
                await capture.eof.wait()
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await child.finish(drain_timeout_s)
    wall_time = time.monotonic() - started
    exit_code = TIMEOUT_EXIT_CODE if timed_out else _exit_code(child.returncode)
    output = capture.output
    return ExecResult(
        exit_code=exit_code,
        output=output,
        wall_time_s=wall_time,
        timed_out=timed_out,
        omitted_bytes=capture.total - len(output),
        total_lines=capture.lines,
    )
