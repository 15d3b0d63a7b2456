"""Transports: newline-delimited JSON on stdio, and one message per text frame on a websocket.

* stdio: lines are read in a worker thread (``readline`` with a bound: a line over
  ``max_line_bytes`` is skipped to its end and reported as ``TooLarge``, so one huge line costs
  no memory and never ends the server). Writes go out in batches (everything queued at the time).
  Stdin EOF ends the connection.
* ``ws://HOST:PORT``: loopback hosts are served without a token, any other host needs the
  ``Authorization: Bearer TOKEN`` header (or ``?token=``); a request with an ``Origin`` header is
  refused with 403 (a web page must not drive the agent); ``GET /readyz`` and ``/healthz`` answer
  200. Each websocket connection is a client of its own (its threads end with it).
"""

from __future__ import annotations

import hmac
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

import anyio

__all__ = [
    "MAX_LINE_BYTES",
    "TooLarge",
    "parse_listen",
    "serve_websocket",
    "stdio_lines",
    "stdout_writer",
]

MAX_LINE_BYTES = 8 * 1024 * 1024
"""The largest message accepted (Codex's schema has no limit; 8 MiB holds a large image)."""


@dataclass(frozen=True)
class TooLarge:
    """A line longer than the limit (its bytes were skipped)."""

    size: int
    limit: int


def _read_line(stream: IO[bytes], limit: int) -> bytes | TooLarge | None:
    line = stream.readline(limit + 1)
    if not line:
        return None
    if len(line) <= limit or line.endswith(b"\n"):
        return line
    size = len(line)
    while True:
        more = stream.readline(1 << 16)
        size += len(more)
        if not more or more.endswith(b"\n"):
            return TooLarge(size=size, limit=limit)


async def stdio_lines(
    stream: IO[bytes] | None = None, *, limit: int = MAX_LINE_BYTES
) -> AsyncIterator[bytes | TooLarge]:
    """The lines of ``stream`` (default stdin) until EOF; blank lines are skipped."""
    source = stream if stream is not None else sys.stdin.buffer
    while True:
        line = await anyio.to_thread.run_sync(_read_line, source, limit, abandon_on_cancel=True)
        if line is None:
            return
        if isinstance(line, bytes) and not line.strip():
            continue
        yield line


def stdout_writer(stream: IO[bytes] | None = None) -> Callable[[bytes], Awaitable[None]]:
    """An async writer of whole messages to ``stream`` (default stdout), flushed each time."""
    target = stream if stream is not None else sys.stdout.buffer

    def write(data: bytes) -> None:
        target.write(data)
        target.flush()

    async def write_async(data: bytes) -> None:
        await anyio.to_thread.run_sync(write, data)

    return write_async


# --- websocket -------------------------------------------------------------------------------

_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def parse_listen(value: str) -> tuple[str, int] | None:
    """``stdio`` / ``stdio://`` → None; ``ws://HOST:PORT`` → (host, port); else ValueError."""
    if value in ("stdio", "stdio://"):
        return None
    parts = urlsplit(value)
    if parts.scheme != "ws" or parts.hostname is None or parts.port is None:
        raise ValueError(f"--listen takes stdio:// or ws://HOST:PORT, not {value!r}")
    return parts.hostname, parts.port


def needs_token(host: str) -> bool:
    return host.strip().lower() not in _LOOPBACK


def _presented_token(path: str, headers: Any) -> str | None:
    auth = headers.get("Authorization")
    if isinstance(auth, str) and auth.startswith("Bearer "):
        return auth[len("Bearer ") :].strip()
    values = parse_qs(urlsplit(path).query).get("token")
    return values[0] if values else None


ConnectionHandler = Callable[
    [AsyncIterator[bytes], Callable[[bytes], Awaitable[None]]], Awaitable[None]
]


async def serve_websocket(
    host: str,
    port: int,
    handler: ConnectionHandler,
    *,
    token: str | None,
    on_listening: Callable[[int], None],
    max_size: int = MAX_LINE_BYTES,
) -> None:
    """Serve websocket clients until cancelled; ``on_listening(port)`` once bound."""
    from websockets.asyncio.server import ServerConnection, serve
    from websockets.exceptions import ConnectionClosed
    from websockets.http11 import Request, Response

    def check(connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if request.headers.get("Origin") is not None:
            return connection.respond(HTTPStatus.FORBIDDEN, "Origin header not allowed\n")
        if path in ("/readyz", "/healthz") and request.headers.get("Upgrade") is None:
            return connection.respond(HTTPStatus.OK, "ok\n")
        if token is not None:
            presented = _presented_token(request.path, request.headers)
            if presented is None or not hmac.compare_digest(presented, token):
                return connection.respond(HTTPStatus.UNAUTHORIZED, "missing or wrong token\n")
        return None

    async def on_connection(websocket: ServerConnection) -> None:
        async def frames() -> AsyncIterator[bytes]:
            try:
                async for message in websocket:
                    yield message.encode() if isinstance(message, str) else message
            except ConnectionClosed:
                return

        async def write(data: bytes) -> None:
            for line in data.splitlines():
                await websocket.send(line.decode())

        await handler(frames(), write)

    async with serve(on_connection, host, port, process_request=check, max_size=max_size) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        on_listening(bound)
        await anyio.sleep_forever()
