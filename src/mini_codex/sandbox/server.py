"""The agent's side of a long-lived bubblewrap sandbox: start it, run commands in it, end it.

One ``bwrap`` (the same command line and flags a per-command run gets, ``bwrap.bwrap_argv``)
starts the command server (``server_main.py``) with one end of a ``SOCK_SEQPACKET`` socket pair.
A command then costs a fork + exec inside namespaces that already exist instead of building
them again (a bare ``bwrap true`` costs several milliseconds).

Per command the agent makes two pipes, sends the request with their write ends attached and keeps
the read ends: the output pipe is read exactly as a local child's stdout (``exec.supervise``), so
timeouts, the post-exit drain, capture bounds and ``on_output`` are the same code; the status pipe
says when the command started, or why it could not (``OSError``, as a local start would raise),
and its exit status. Process-group kills go to the server (``kill``), and ``end`` kills what is
left of the call, background children that called ``setsid`` included.

A server that stops answering (a command sent it SIGSTOP) or dies (a command killed it) fails
only the calls in flight: a kill it does not act on within ``KILL_GRACE_S`` ends the whole sandbox
(SIGKILL to ``bwrap``; the kernel then kills every process in its PID namespace), its status pipes
close, those commands report exit 137 (SIGKILL), and the next command starts a fresh sandbox.
``bwrap --die-with-parent`` ties the sandbox to the agent's process: it never outlives it.
What does not belong here: which sandbox a command needs (``pool.py``), the command line
(``bwrap.py``).
"""

from __future__ import annotations

import array
import errno as errno_codes
import json
import os
import signal
import socket
import subprocess
import sys
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from mini_codex.errors import SandboxError

__all__ = [
    "KILL_GRACE_S",
    "SERVER_PATH",
    "START_TIMEOUT_S",
    "RequestTooLargeError",
    "SandboxGoneError",
    "SandboxServer",
    "ServerCommand",
    "server_command",
]

SERVER_PATH = str(Path(__file__).with_name("server_main.py"))
KILL_GRACE_S = 3.0
START_TIMEOUT_S = 10.0
_READ_CHUNK = 64 * 1024


class RequestTooLargeError(OSError):
    """The command's argv + environment do not fit in one request packet."""


class SandboxGoneError(OSError):
    """The sandbox ended (a command killed its server): start a fresh one and try again."""


def server_command(fd: int, *, landlock: bool = False, python: str = sys.executable) -> list[str]:
    """The argv the confinement starts: the server, talking on inherited descriptor ``fd``."""
    return [python, "-I", "-X", "utf8", SERVER_PATH, str(fd), *(["--landlock"] if landlock else [])]


class FdReceiveStream(ByteReceiveStream):
    """A byte stream over the read end of a pipe (non-blocking, closed by ``aclose``)."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            if self._fd < 0:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    async def aclose(self) -> None:
        self.close()


def _kill_sandbox(process: subprocess.Popen[bytes], sock: socket.socket) -> None:
    """End a sandbox now (also at garbage collection, without an event loop): close the socket,
    SIGKILL bwrap and reap it (it dies at once; the kernel then ends its PID namespace)."""
    sock.close()
    if process.poll() is None:
        process.kill()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    if process.stderr is not None:
        process.stderr.close()


class SandboxServer:
    """One running sandbox with its command server (see the module docstring)."""

    def __init__(
        self, process: subprocess.Popen[bytes], sock: socket.socket, *, landlock: bool = False
    ) -> None:
        self._process = process
        self.host_pids = landlock
        """No PID namespace (the Landlock server): command PIDs are the agent's PIDs too."""
        self._sock = sock
        self._next_id = 0
        self.active = 0
        """Commands started here and not finished yet."""
        self._finalizer = weakref.finalize(self, _kill_sandbox, process, sock)

    @property
    def pid(self) -> int:
        """The host PID of the ``bwrap`` process."""
        return self._process.pid

    @classmethod
    async def start(cls, prefix: Sequence[str], *, landlock: bool = False) -> SandboxServer:
        """Start ``prefix + server argv`` (``bwrap.bwrap_argv`` with an empty command, or the
        Landlock shim's argv with ``landlock``) and wait until the server is ready. Raises
        ``SandboxError`` when it does not start."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            # A plain Popen (a fork + exec from this thread: bwrap's --die-with-parent follows
            # the thread that started it): it can be killed and reaped without an event loop,
            # at garbage collection of a pool nobody closed.
            process = subprocess.Popen(  # noqa: ASYNC220
                [*prefix, *server_command(theirs.fileno(), landlock=landlock)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),),
                env={},
            )
        except OSError as exc:
            ours.close()
            raise SandboxError(f"cannot start the sandbox: {exc}") from exc
        finally:
            theirs.close()
        ours.setblocking(False)
        server = cls(process, ours, landlock=landlock)
        ready = b""
        with anyio.move_on_after(START_TIMEOUT_S):
            while True:
                try:
                    ready = ours.recv(4096)
                    break
                except BlockingIOError:
                    await anyio.wait_readable(ours)
        if ready != b'{"ready": true}':
            server.kill()
            detail = b""
            if process.stderr is not None:
                os.set_blocking(process.stderr.fileno(), False)
                try:
                    detail = process.stderr.read() or b""
                except OSError:
                    detail = b""
            server.kill()
            reason = detail.decode("utf-8", "replace").strip() or "no error output"
            raise SandboxError(f"the sandbox server did not start: {reason}")
        if process.stderr is not None:
            process.stderr.close()
        return server

    @property
    def alive(self) -> bool:
        return self._finalizer.alive and self._process.poll() is None

    def kill(self) -> None:
        """End the sandbox and every process in it, now (and reap ``bwrap``)."""
        self._finalizer()

    async def aclose(self) -> None:
        """End the sandbox (``kill``)."""
        self.kill()

    def send(self, message: Mapping[str, object], fds: Sequence[int] = ()) -> None:
        """Send one request; a server that cannot take it is ended (raises ``OSError``)."""
        data = json.dumps(message, separators=(",", ":")).encode("utf-8", "surrogateescape")
        ancillary = []
        if fds:
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]
        try:
            self._sock.sendmsg([data], ancillary)
        except OSError as exc:
            if exc.errno == errno_codes.EMSGSIZE:
                raise RequestTooLargeError(exc.errno, "command too large for one request") from exc
            self.kill()
            raise SandboxGoneError(exc.errno, f"the sandbox is gone: {exc}") from exc

    async def start_command(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        start_timeout_s: float = START_TIMEOUT_S,
        terminal: int | None = None,
    ) -> ServerCommand:
        """Start ``argv`` in the sandbox. Raises ``OSError`` when it cannot start
        (``SandboxGoneError`` when the sandbox was gone before it took the request: the caller
        may start a fresh one). A server that does not say within ``start_timeout_s`` whether
        the command started (a command stopped it) is ended with its sandbox.

        ``terminal``: a PTY's slave end to give the command as stdin, stdout and stderr (the
        caller keeps reading the master end; the command then has no ``stdout`` stream here)."""
        # What subprocess refuses before starting anything, refused here alike.
        if any("\0" in text for text in (*argv, str(cwd), *env.keys(), *env.values())):
            raise ValueError("embedded null byte")
        if any("=" in name for name in env):
            raise ValueError("illegal environment variable name")
        self._next_id += 1
        call_id = self._next_id
        out_r, out_w = os.pipe2(os.O_CLOEXEC) if terminal is None else (-1, terminal)
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        request = {"op": "run", "id": call_id, "argv": list(argv), "cwd": str(cwd), "env": env}
        if terminal is not None:
            request["terminal"] = True
        try:
            self.send(request, (out_w, status_w))
        except BaseException:
            for fd in (out_r, status_r):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            if terminal is None:
                os.close(out_w)
            os.close(status_w)
        stdout = FdReceiveStream(out_r) if out_r >= 0 else None
        command = ServerCommand(self, call_id, stdout, FdReceiveStream(status_r))
        self.active += 1
        try:
            with anyio.move_on_after(start_timeout_s) as waited:
                await command.started()
            if waited.cancelled_caught:
                self.kill()
                await command.started()  # the end of the status stream: reported killed
        except BaseException:
            with anyio.CancelScope(shield=True):
                await command.finish(0.2)
            raise
        return command


class ServerCommand:
    """A command the server started (``exec.Child``)."""

    def __init__(
        self,
        server: SandboxServer,
        call_id: int,
        stdout: FdReceiveStream | None,
        status: FdReceiveStream,
    ) -> None:
        self._server = server
        self._id = call_id
        self._stdout = stdout
        self._status = status
        self._buffer = b""
        self._exit: int | None = None
        self._pid: int | None = None
        self._done = False
        self._killed = False
        self._finished = False

    @property
    def stdout(self) -> ByteReceiveStream:
        if self._stdout is None:
            raise RuntimeError("a command on a terminal has no output stream here")
        return self._stdout

    @property
    def pid(self) -> int | None:
        """The command's PID in the agent's PID namespace (None under bubblewrap)."""
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._exit

    async def _message(self) -> dict[str, object] | None:
        """The next status line; None at end of stream (the sandbox ended)."""
        while b"\n" not in self._buffer:
            try:
                self._buffer += await self._status.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return None
        line, self._buffer = self._buffer.split(b"\n", 1)
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    async def started(self) -> None:
        message = await self._message()
        if message is None:
            # The sandbox ended after it took the request: the command may have run (and ended
            # it, too) — report it killed, never run it twice.
            self._server.kill()
            self._exit, self._done = -signal.SIGKILL, True
            return
        if "errno" in message:
            code = message["errno"]
            raise OSError(code if isinstance(code, int) else 0, str(message.get("error")))
        pid = message.get("pid")
        if self._server.host_pids and isinstance(pid, int) and pid > 1:
            self._pid = pid

    async def wait(self) -> None:
        if self._done:
            return
        if self._killed:
            with anyio.move_on_after(KILL_GRACE_S):
                await self._wait_exit()
                return
            self._server.kill()  # it did not act on the kill: end the whole sandbox
        await self._wait_exit()

    async def _wait_exit(self) -> None:
        while not self._done:
            message = await self._message()
            if message is None:  # the server is gone
                self._kill_directly()
                self._exit = self._exit if self._exit is not None else -signal.SIGKILL
                self._done = True
            elif "exit" in message:
                code = message["exit"]
                self._exit = code if isinstance(code, int) else -signal.SIGKILL
                self._done = True

    def _send(self, op: str) -> None:
        try:
            self._server.send({"op": op, "id": self._id})
        except OSError:
            pass  # the sandbox is gone (and with it every process of the command)

    def _kill_directly(self) -> None:
        """Without a PID namespace nothing ends the command with its server: kill its group
        from here (its processes cannot leave it: ``setsid``/``setpgid`` are denied)."""
        if self._pid is not None:
            try:
                os.killpg(self._pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill_group(self) -> None:
        self._killed = True
        self._kill_directly()
        self._send("kill")

    async def finish(self, drain_timeout_s: float) -> None:
        if self._finished:
            return
        self._finished = True
        self._killed = True
        self._kill_directly()
        self._send("end")
        try:
            await self.wait()
            stdout = self._stdout
            with anyio.move_on_after(max(drain_timeout_s, 0.05)):
                try:
                    while stdout is not None:
                        await stdout.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    pass
        finally:
            if self._stdout is not None:
                self._stdout.close()
            self._status.close()
            self._server.active -= 1
