"""Listeners: ``ws://IP:PORT`` (one connection per websocket) and ``stdio`` (one connection).

Websocket auth, as Codex: without ``--ws-auth`` only a loopback address may be listened on;
``capability-token`` requires ``Authorization: Bearer <token>`` where the token is the content of
``--ws-token-file`` (compared in constant time). An upgrade carrying an ``Origin`` header (a
browser) is refused with 403 in every mode.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import urlsplit

import anyio
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from mini_codex.environments.transport import MAX_MESSAGE_BYTES, LineStream, WebSocketStream
from mini_codex.exec_server.connection import serve_connection

__all__ = ["ListenConfig", "ListenError", "parse_listen", "serve_stdio", "serve_websocket"]


class ListenError(ValueError):
    """A listen address or auth setting that cannot be served (one line for the user)."""


@dataclass(frozen=True)
class ListenConfig:
    own_env: Mapping[str, str]
    cwd: str
    shell: str
    token: str | None = None
    """The capability token (``--ws-auth capability-token``); None: loopback only."""
    allow_unsandboxed: bool = False


def parse_listen(url: str, *, token: str | None) -> tuple[str, int] | None:
    """``ws://IP:PORT`` → (host, port); ``stdio`` / ``stdio://`` → None."""
    if url in ("stdio", "stdio://"):
        return None
    parts = urlsplit(url)
    if parts.scheme != "ws" or not parts.hostname or parts.port is None:
        raise ListenError(f"--listen must be ws://IP:PORT or stdio, got {url!r}")
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        raise ListenError(f"--listen needs an IP address, got {parts.hostname!r}") from None
    if not address.is_loopback and token is None:
        raise ListenError(
            f"refusing to listen on non-loopback {parts.hostname} without authentication: "
            "use --ws-auth capability-token --ws-token-file FILE"
        )
    return parts.hostname, parts.port


def _refuse(status: HTTPStatus, text: str) -> Response:
    return Response(
        status.value,
        status.phrase,
        Headers([("Content-Type", "text/plain")]),
        (text + "\n").encode(),
    )


def _check(token: str | None) -> Callable[[ServerConnection, Request], Response | None]:
    def process_request(connection: ServerConnection, request: Request) -> Response | None:
        if "Origin" in request.headers:
            return _refuse(HTTPStatus.FORBIDDEN, "browser origins are not allowed")
        if token is not None:
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                return _refuse(HTTPStatus.UNAUTHORIZED, "missing or wrong capability token")
        return None

    return process_request


async def serve_websocket(
    host: str, port: int, config: ListenConfig, *, ready: Callable[[int], None] | None = None
) -> None:
    """Serve until cancelled; ``ready(port)`` is called once listening (port 0 picks one)."""

    async def handler(connection: ServerConnection) -> None:
        await serve_connection(
            WebSocketStream(connection),
            own_env=config.own_env,
            cwd=config.cwd,
            shell=config.shell,
            allow_unsandboxed=config.allow_unsandboxed,
        )

    async with serve(
        handler,
        host,
        port,
        process_request=_check(config.token),
        max_size=MAX_MESSAGE_BYTES,
        ping_interval=None,
        compression=None,
    ) as server:
        if ready is not None:
            bound = next(iter(server.sockets)).getsockname()[1]
            ready(int(bound))
        await anyio.sleep_forever()


class _FdIn:
    """Our stdin as a non-blocking byte stream (the event loop waits for it to be readable)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            await anyio.wait_readable(self.fd)
            try:
                data = os.read(self.fd, max_bytes)
            except BlockingIOError:
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        pass


class _FdOut:
    """Our stdout, written from a worker thread (a slow reader never blocks the event loop)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, True)

    async def send(self, data: bytes) -> None:
        await anyio.to_thread.run_sync(self._write_all, data)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    async def aclose(self) -> None:
        pass


async def serve_stdio(config: ListenConfig) -> None:
    """One connection over our stdin/stdout; returns when stdin closes."""
    stream = LineStream(_FdIn(sys.stdin.fileno()), _FdOut(sys.stdout.fileno()))  # type: ignore[arg-type]
    await serve_connection(
        stream,
        own_env=config.own_env,
        cwd=config.cwd,
        shell=config.shell,
        allow_unsandboxed=config.allow_unsandboxed,
    )
