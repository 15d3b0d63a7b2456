"""The processes of one executor connection: start, output with sequence numbers, long-poll reads.

Each process gets its own process group (``start_new_session``); its stdout and stderr chunks are
numbered with one sequence per process (``seq`` 1, 2, …), then ``exited`` and ``closed`` take the
next numbers, as Codex's executor does. Every event is also pushed to ``notify`` (the
``process/output`` / ``process/exited`` / ``process/closed`` notifications). ``aclose`` kills every
process group (a closed connection kills its processes). An exit by signal N is ``128 + N``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process, TaskGroup

from mini_codex.protocol.exec_server import EnvPolicy, b64encode

__all__ = ["ExecutorError", "ProcessTable", "child_env"]

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]
_READ_CHUNK = 64 * 1024
_MAX_BUFFERED = 16 * 1024 * 1024
"""Output kept per process for ``process/read`` (older chunks are dropped beyond this)."""
_MAX_WAIT_MS = 30_000
_CORE_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR", "TZ")


class ExecutorError(Exception):
    """A request the executor refuses: ``code`` and ``message`` go back to the client."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def child_env(
    own: Mapping[str, str], policy: EnvPolicy | None, overlay: Mapping[str, str]
) -> dict[str, str]:
    """The child's environment: derived from the executor's own by ``policy``, then ``overlay``.

    No policy means only ``overlay`` (what Codex's executor does with ``env`` alone)."""
    if policy is None:
        return dict(overlay)
    match policy.inherit:
        case "all":
            env = dict(own)
        case "core":
            env = {name: own[name] for name in _CORE_VARS if name in own}
        case "none":
            env = {}
    for name in policy.exclude:
        env.pop(name, None)
    env.update(policy.set)
    if policy.include_only:
        env = {name: value for name, value in env.items() if name in policy.include_only}
    env.update(overlay)
    return env


@dataclass
class _Chunk:
    seq: int
    stream: str
    data: bytes


@dataclass
class _Proc:
    process: Process
    chunks: list[_Chunk] = field(default_factory=list)
    next_seq: int = 1
    exit_code: int | None = None
    closed: bool = False
    changed: anyio.Event = field(default_factory=anyio.Event)
    buffered: int = 0

    def bump(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def take_seq(self) -> int:
        seq = self.next_seq
        self.next_seq += 1
        return seq


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


class ProcessTable:
    """The processes of one connection; their readers run in ``task_group``."""

    def __init__(self, task_group: TaskGroup, notify: Notify) -> None:
        self._tg = task_group
        self._notify = notify
        self._procs: dict[str, _Proc] = {}

    async def start(
        self, process_id: str, argv: list[str], cwd: str, env: Mapping[str, str], pipe_stdin: bool
    ) -> None:
        if process_id in self._procs:
            raise ExecutorError(-32600, f"process {process_id} already exists")
        if not argv:
            raise ExecutorError(-32602, "argv must not be empty")
        try:
            process = await anyio.open_process(
                argv,
                cwd=cwd,
                env=dict(env),
                stdin=-1 if pipe_stdin else -3,  # subprocess.PIPE / DEVNULL
                start_new_session=True,
            )
        except OSError as exc:
            raise ExecutorError(-32004, f"{exc.strerror or exc} (os error {exc.errno})") from exc
        proc = _Proc(process)
        self._procs[process_id] = proc
        self._tg.start_soon(self._supervise, process_id, proc)

    async def _supervise(self, process_id: str, proc: _Proc) -> None:
        assert proc.process.stdout is not None
        assert proc.process.stderr is not None
        async with anyio.create_task_group() as pumps:
            pumps.start_soon(self._pump, process_id, proc, proc.process.stdout, "stdout")
            pumps.start_soon(self._pump, process_id, proc, proc.process.stderr, "stderr")
            await proc.process.wait()
            proc.exit_code = _exit_code(proc.process.returncode or 0)
        exited = {"processId": process_id, "seq": proc.take_seq(), "exitCode": proc.exit_code}
        await self._notify("process/exited", {**exited, "sandboxDenied": False})
        proc.closed = True
        proc.bump()
        await self._notify("process/closed", {"processId": process_id, "seq": proc.take_seq()})

    async def _pump(
        self, process_id: str, proc: _Proc, stream: ByteReceiveStream, name: str
    ) -> None:
        try:
            async for data in stream:
                chunk = _Chunk(proc.take_seq(), name, data)
                proc.chunks.append(chunk)
                proc.buffered += len(data)
                while proc.buffered > _MAX_BUFFERED and len(proc.chunks) > 1:
                    proc.buffered -= len(proc.chunks.pop(0).data)
                proc.bump()
                params = {"processId": process_id, "seq": chunk.seq, "stream": name}
                await self._notify("process/output", {**params, "chunk": b64encode(data)})
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def _get(self, process_id: str) -> _Proc:
        proc = self._procs.get(process_id)
        if proc is None:
            raise ExecutorError(-32600, f"unknown process id {process_id}")
        return proc

    async def read(
        self, process_id: str, after_seq: int | None, max_bytes: int | None, wait_ms: int | None
    ) -> dict[str, Any]:
        proc = self._get(process_id)
        after = after_seq or 0
        if wait_ms and not proc.closed and not any(c.seq > after for c in proc.chunks):
            with anyio.move_on_after(min(wait_ms, _MAX_WAIT_MS) / 1000):
                await proc.changed.wait()
        chunks: list[dict[str, Any]] = []
        size = 0
        for chunk in proc.chunks:
            if chunk.seq <= after:
                continue
            if max_bytes is not None and chunks and size + len(chunk.data) > max_bytes:
                break
            size += len(chunk.data)
            chunks.append(
                {"seq": chunk.seq, "stream": chunk.stream, "chunk": b64encode(chunk.data)}
            )
        next_seq = chunks[-1]["seq"] + 1 if chunks else max(after + 1, 1)
        if proc.closed and (not chunks or chunks[-1]["seq"] == proc.chunks[-1].seq):
            next_seq = proc.next_seq
        return {
            "chunks": chunks,
            "nextSeq": next_seq,
            "exited": proc.exit_code is not None,
            "exitCode": proc.exit_code,
            "closed": proc.closed,
            "failure": None,
            "sandboxDenied": False,
        }

    async def write(self, process_id: str, data: bytes) -> str:
        proc = self._procs.get(process_id)
        if proc is None:
            return "unknownProcess"
        stdin = proc.process.stdin
        if stdin is None or proc.exit_code is not None:
            return "stdinClosed"
        try:
            await stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            return "stdinClosed"
        return "accepted"

    def signal(self, process_id: str, name: str) -> None:
        proc = self._get(process_id)
        signum = {"interrupt": signal.SIGINT, "terminate": signal.SIGTERM}.get(name)
        if signum is None:
            raise ExecutorError(-32602, f"unknown signal {name!r}")
        self._kill_group(proc, signum)

    def terminate(self, process_id: str) -> bool:
        proc = self._get(process_id)
        running = proc.exit_code is None
        if running:
            self._kill_group(proc, signal.SIGKILL)
        return running

    @staticmethod
    def _kill_group(proc: _Proc, signum: int) -> None:
        if proc.exit_code is not None:
            return
        try:
            os.killpg(proc.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def kill_all(self) -> None:
        """Kill every process group still running (the connection closed)."""
        for proc in self._procs.values():
            self._kill_group(proc, signal.SIGKILL)
