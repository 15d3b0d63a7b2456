"""One command running on a pseudo-terminal, in its own process group (``exec_command``).

The child gets the PTY's slave end as stdin, stdout and stderr and starts a new session, so its
PID is the process-group id and ``kill()`` ends everything it started. Output is read from the
master end on demand (``read_for``): between calls it waits in the kernel's PTY buffer.

A sandboxed command runs in the session's long-lived sandbox when there is one for it
(``sandbox.pool.SandboxPool.start_on_terminal``: the slave end is handed to the sandbox's command
server), else ``argv`` (the confinement's full command line) is started here.
"""

from __future__ import annotations

import errno
import os
import termios
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import anyio

from mini_codex.sandbox.exec import LocalProcess
from mini_codex.sandbox.launch import PreparedCommand, SandboxRequest
from mini_codex.sandbox.pool import SandboxPool

__all__ = ["PtyProcess", "SessionProcess"]

_READ_CHUNK = 65536


class SessionProcess(Protocol):
    """What a live session needs of its command: a local ``PtyProcess`` or a process on an
    executor (``environments.remote_process.RemoteProcess``)."""

    @property
    def pid(self) -> int | None: ...

    @property
    def exit_code(self) -> int | None: ...

    @property
    def finished(self) -> bool: ...

    async def read_for(
        self, seconds: float, *, limit: int, on_output: Callable[[bytes], None] | None = None
    ) -> tuple[bytes, int]: ...

    async def write(self, chars: str) -> None: ...

    async def kill(self) -> None: ...


class _Handle(Protocol):
    """The started command: a local process, or one a sandbox's command server started."""

    @property
    def pid(self) -> int | None: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> None: ...

    def kill_group(self) -> None: ...

    async def finish(self, drain_timeout_s: float) -> None: ...


class _Local(LocalProcess):
    async def finish(self, drain_timeout_s: float) -> None:
        self.kill_group()
        await self._process.wait()
        await self._process.aclose()


class PtyProcess:
    """A started command; ``read_for`` collects output, ``write`` types into its terminal."""

    def __init__(self, process: _Handle, master: int) -> None:
        self._process = process
        self._master = master
        self._eof = False
        self.started = time.monotonic()

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        echo: bool = True,
        sandbox: tuple[SandboxPool, PreparedCommand, SandboxRequest] | None = None,
    ) -> PtyProcess:
        """Spawn ``argv`` (in ``sandbox``'s long-lived sandbox when it has one for the command);
        ``echo=False`` (``tty=false``) turns off the terminal's echo of typed input and its
        output processing (``\n`` stays ``\n``, as from a pipe)."""
        master, slave = os.openpty()
        try:
            if not echo:
                attrs = termios.tcgetattr(slave)
                attrs[1] &= ~termios.OPOST
                attrs[3] &= ~termios.ECHO
                termios.tcsetattr(slave, termios.TCSANOW, attrs)
            handle: _Handle | None = None
            if sandbox is not None:
                pool, prepared, request = sandbox
                handle = await pool.start_on_terminal(
                    prepared, request, cwd, env=env, terminal=slave
                )
            if handle is None:
                process = await anyio.open_process(
                    list(argv),
                    stdin=slave,
                    stdout=slave,
                    stderr=slave,
                    cwd=cwd,
                    env=dict(env),
                    start_new_session=True,
                )
                handle = _Local(process)
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        return cls(handle, master)

    @property
    def pid(self) -> int | None:
        """The process-group id (None when a bubblewrap sandbox's server started it)."""
        return self._process.pid

    @property
    def exit_code(self) -> int | None:
        return self._process.returncode

    async def read_for(
        self, seconds: float, *, limit: int, on_output: Callable[[bytes], None] | None = None
    ) -> tuple[bytes, int]:
        """Output until ``seconds`` pass or the command exits (then everything left is read):
        at most ``limit`` bytes (head and tail) and the number of bytes dropped between them.
        ``on_output`` sees every chunk as it is read (a live tail)."""
        head = bytearray()
        tail = bytearray()
        omitted = 0
        half = max(limit // 2, 1)
        deadline = time.monotonic() + seconds
        while not self._eof:
            chunk = self._read_now()
            if chunk:
                if on_output is not None:
                    on_output(chunk)
                room = half - len(head)
                head += chunk[:room]
                tail += chunk[max(room, 0) :]
                if len(tail) > half:
                    omitted += len(tail) - half
                    del tail[: len(tail) - half]
                continue
            if self._eof or self._process.returncode is not None:
                break  # exited, its output drained (a background child may hold the PTY)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            with anyio.move_on_after(min(remaining, 0.05)):
                await anyio.wait_readable(self._master)
            if self._process.returncode is None:
                await self._poll_exit()
        if self._eof:
            with anyio.move_on_after(2):
                await self._process.wait()
        return bytes(head + tail), omitted

    async def _poll_exit(self) -> None:
        with anyio.move_on_after(0):
            await self._process.wait()

    def _read_now(self) -> bytes:
        try:
            data = os.read(self._master, _READ_CHUNK)
        except BlockingIOError:
            return b""
        except OSError as exc:  # EIO: every slave end is closed (the command exited)
            if exc.errno != errno.EIO:
                raise
            data = b""
        if not data:
            self._eof = True
        return data

    @property
    def finished(self) -> bool:
        """The command exited (its output so far has been read)."""
        return self._process.returncode is not None

    async def write(self, chars: str) -> None:
        data = chars.encode("utf-8")
        while data:
            try:
                written = os.write(self._master, data)
            except BlockingIOError:
                await anyio.wait_writable(self._master)
                continue
            data = data[written:]

    async def kill(self) -> None:
        """Kill the whole process group, reap the child and release the terminal."""
        self._process.kill_group()
        with anyio.move_on_after(5, shield=True):
            await self._process.wait()
            await self._process.finish(0.1)
        self.close()

    def close(self) -> None:
        if self._master >= 0:
            os.close(self._master)
            self._master = -1
        self._eof = True
