"""One process on an executor, as the client sees it (Codex's ``process/*`` methods).

``ExecServerClient.start_process`` sends ``process/start`` and returns a ``RemoteProcess``; the
client's reader loop feeds it the ``process/output`` / ``process/exited`` / ``process/closed``
notifications (``on_output`` / ``on_exited`` / ``on_closed``). The handle has the same surface as
a local unified-exec ``PtyProcess`` (``read_for``, ``write``, ``kill``, ``exit_code``,
``finished``, ``pid``), so a remote command that outlives its yield time is kept as a unified
exec session and ``write_stdin`` reaches it: ``write`` is ``process/write`` (the bytes base64,
a fresh ``writeId``), ``kill`` is ``process/terminate``.

Output chunks are consumed in ``seq`` order: ``read_for`` returns what arrived since the previous
read and drops it from the buffer. A connection that ends before the process exited makes
``read_for`` and ``write`` raise ``ExecutorGone`` (the command is never started again).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import anyio

from mini_codex.protocol.exec_server import b64encode

__all__ = ["ExecutorGone", "ExecutorRequestError", "RemoteProcess", "StdinClosed"]

_TERMINATE_TIMEOUT_S = 5.0


class ExecutorGone(Exception):
    """The connection to the executor ended (or never answered in time)."""


class ExecutorRequestError(Exception):
    """The executor answered a request with an error object."""

    def __init__(self, method: str, code: int, message: str) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.code = code
        self.message = message


class StdinClosed(Exception):
    """``process/write`` was not accepted (``stdinClosed`` / ``unknownProcess``)."""


class _Client(Protocol):
    """What a process needs of its connection (``client.ExecServerClient``)."""

    @property
    def connected(self) -> bool: ...

    closed_reason: str | None

    async def request(
        self, method: str, params: Mapping[str, Any], *, timeout_s: float = ...
    ) -> dict[str, Any]: ...

    def forget(self, process_id: str) -> None: ...


class RemoteProcess:
    def __init__(self, client: _Client, process_id: str) -> None:
        self.client = client
        self.process_id = process_id
        self.started = time.monotonic()
        self._chunks: dict[int, bytes] = {}
        self._exit_code: int | None = None
        self._closed = anyio.Event()
        self._changed = anyio.Event()
        self._released = False

    # -- fed by the client's reader loop -------------------------------------------------
    def on_output(self, seq: int, data: bytes) -> None:
        self._chunks[seq] = data
        self._bump()

    def on_exited(self, exit_code: int) -> None:
        self._exit_code = exit_code
        self._bump()

    def on_closed(self) -> None:
        self._closed.set()
        self._bump()

    def _bump(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    # -- the unified-exec process surface --------------------------------------------------
    @property
    def pid(self) -> int | None:
        return None  # not a process group on this machine

    @property
    def exit_code(self) -> int | None:
        return self._exit_code

    @property
    def finished(self) -> bool:
        return self._exit_code is not None and self._closed.is_set()

    @property
    def gone(self) -> bool:
        """The connection ended before the process exited."""
        return not self.client.connected and self._exit_code is None

    def take_output(self) -> bytes:
        data = b"".join(self._chunks[seq] for seq in sorted(self._chunks))
        self._chunks.clear()
        return data

    async def wait_closed(self, seconds: float) -> bool:
        with anyio.move_on_after(seconds):
            await self._closed.wait()
        return self._closed.is_set()

    async def read_for(
        self, seconds: float, *, limit: int, on_output: Callable[[bytes], None] | None = None
    ) -> tuple[bytes, int]:
        """Output until ``seconds`` pass or the process closes: at most ``limit`` bytes (head and
        tail) and the number of bytes dropped between them."""
        collected = bytearray()
        deadline = time.monotonic() + seconds
        while True:
            chunk = self.take_output()
            if chunk:
                if on_output is not None:
                    on_output(chunk)
                collected += chunk
            if self._closed.is_set() or self.gone:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            with anyio.move_on_after(remaining):
                await self._changed.wait()
        collected += self.take_output()
        if self.gone:
            raise ExecutorGone(self.client.closed_reason or "the executor went away mid-command")
        half = max(limit // 2, 1)
        if len(collected) <= limit:
            return bytes(collected), 0
        return bytes(collected[:half] + collected[-half:]), len(collected) - 2 * half

    async def write(self, chars: str) -> None:
        result = await self.client.request(
            "process/write",
            {
                "processId": self.process_id,
                "chunk": b64encode(chars.encode("utf-8")),
                "writeId": f"w-{uuid.uuid4()}",
            },
        )
        status = result.get("status")
        if status != "accepted":
            raise StdinClosed(f"the process did not take the input ({status})")

    async def kill(self) -> None:
        """``process/terminate`` (if it still runs) and forget the process; never raises for a
        connection that is already gone."""
        if not self._released:
            self._released = True
            if self.client.connected and not self.finished:
                with anyio.CancelScope(shield=True):
                    try:
                        await self.client.request(
                            "process/terminate",
                            {"processId": self.process_id},
                            timeout_s=_TERMINATE_TIMEOUT_S,
                        )
                    except (ExecutorGone, ExecutorRequestError):
                        pass
            self.client.forget(self.process_id)

    def close(self) -> None:
        self.client.forget(self.process_id)
