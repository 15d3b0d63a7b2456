"""Message streams for the exec-server protocol: one JSON message per websocket frame or per line.

``WebSocketStream`` wraps a ``websockets`` connection (client or server side; text and binary
frames are both accepted, as Codex's client does); ``LineStream`` frames newline-delimited JSON over
a byte stream pair (a stdio executor's pipes, or our own stdin/stdout). Both bound a message at
``MAX_MESSAGE_BYTES``: a larger one ends the stream (``TransportClosed``), it is never buffered
without limit. What does not belong here: JSON-RPC (``rpc.py``), what the messages mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

if TYPE_CHECKING:  # websockets (~40 ms) is imported when a websocket is opened, not before
    from websockets.asyncio.client import ClientConnection
    from websockets.asyncio.server import ServerConnection

__all__ = [
    "MAX_MESSAGE_BYTES",
    "LineStream",
    "MessageStream",
    "TransportClosed",
    "WebSocketStream",
    "open_websocket",
    "spawn_stdio",
]

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""A file read of up to ~48 MiB fits in base64; anything larger ends the connection."""


class TransportClosed(Exception):
    """The stream ended (closed, broken, or a message over the size limit)."""


class MessageStream(Protocol):
    async def send(self, text: str) -> None: ...

    async def receive(self) -> str: ...

    async def aclose(self) -> None: ...


class WebSocketStream:
    def __init__(self, connection: ClientConnection | ServerConnection) -> None:
        self.connection = connection

    async def send(self, text: str) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self.connection.send(text)
        except ConnectionClosed as exc:
            raise TransportClosed(f"websocket closed: {exc}") from exc

    async def receive(self) -> str:
        from websockets.exceptions import ConnectionClosed

        try:
            frame = await self.connection.recv()
        except ConnectionClosed as exc:
            raise TransportClosed(f"websocket closed: {exc}") from exc
        return frame.decode("utf-8", "replace") if isinstance(frame, bytes) else frame

    async def aclose(self) -> None:
        await self.connection.close()


class LineStream:
    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        *,
        max_bytes: int = MAX_MESSAGE_BYTES,
        process: Process | None = None,
    ) -> None:
        self._receive = receive
        self._send = send
        self._max = max_bytes
        self._buffer = bytearray()
        self._lock = anyio.Lock()
        self.process = process
        """The executor child process this stream talks to (killed on ``aclose``)."""

    async def send(self, text: str) -> None:
        async with self._lock:
            try:
                await self._send.send(text.encode("utf-8") + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
                raise TransportClosed(f"stdio closed: {exc}") from exc

    async def receive(self) -> str:
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                if line.strip():
                    return line.decode("utf-8", "replace")
                continue
            if len(self._buffer) > self._max:
                raise TransportClosed(f"a message exceeded {self._max} bytes")
            try:
                self._buffer.extend(await self._receive.receive(65536))
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                raise TransportClosed("stdio stream ended") from exc

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            try:
                await self._send.aclose()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass
            if self.process is not None:
                with anyio.move_on_after(2):
                    await self.process.wait()
                if self.process.returncode is None:
                    self.process.kill()
                    await self.process.wait()


async def open_websocket(
    url: str, *, timeout_s: float, headers: Mapping[str, str] | None = None
) -> WebSocketStream:
    """Connect (bounded by ``timeout_s``); a clear ``OSError``-like message on failure."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidHandshake, InvalidURI

    try:
        with anyio.fail_after(timeout_s):
            connection = await connect(
                url,
                additional_headers=dict(headers or {}),
                max_size=MAX_MESSAGE_BYTES,
                open_timeout=None,
                ping_interval=None,
                compression=None,
            )
    except TimeoutError as exc:
        raise ConnectionError(f"connecting to `{url}` timed out after {timeout_s:g} s") from exc
    except (OSError, InvalidHandshake, InvalidURI) as exc:
        raise ConnectionError(f"failed to connect to exec-server websocket `{url}`: {exc}") from exc
    return WebSocketStream(connection)


async def spawn_stdio(
    program: str, args: Sequence[str], *, env: Mapping[str, str], cwd: str | None
) -> LineStream:
    """Start a stdio executor (``program args…``); its lifetime is the stream's."""
    try:
        process = await anyio.open_process(
            [program, *args], env=dict(env), cwd=cwd, stderr=-3, start_new_session=True
        )
    except OSError as exc:
        raise ConnectionError(f"failed to start stdio exec-server `{program}`: {exc}") from exc
    assert process.stdout is not None
    assert process.stdin is not None
    return LineStream(process.stdout, process.stdin, process=process)
