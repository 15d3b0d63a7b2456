"""Who may read: the loopback rule and the access token (pure decisions + one ASGI guard).

Only the loopback *names* ``127.0.0.1``, ``::1`` and ``localhost`` are served without a token,
and then only to requests whose ``Host`` header is one of them (a web page that rebinds its own
DNS name to 127.0.0.1 gets 403).
Any other bind address (``0.0.0.0``, a LAN address, even another ``127.x`` address) gets a random
token printed with the URL; a request without it gets 401 and no data. The token is accepted as
``?token=…`` (the page then keeps it in a same-site, HttpOnly cookie named after the server's port,
``mini_codex_token_PORT``, and takes it out of the address bar), as that cookie, or as
``Authorization: Bearer …``. Tokens are compared as bytes in constant time (any presented value,
ASCII or not, is a 401 when it is not the token).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

__all__ = [
    "COOKIE",
    "TokenGuard",
    "cookie_name",
    "loopback_host_header",
    "needs_token",
    "new_token",
]

COOKIE = "mini_codex_token"
"""The cookie's name prefix: the cookie of the server on port P is ``mini_codex_token_P``."""
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "::1", "[::1]", "localhost"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def needs_token(host: str) -> bool:
    """Whether serving on ``host`` requires the access token."""
    return host.strip().lower() not in _LOOPBACK_NAMES


def new_token() -> str:
    return secrets.token_urlsafe(24)


def cookie_name(port: int | None) -> str:
    """The token cookie of the server on ``port`` (two inspectors on one host keep apart)."""
    return f"{COOKIE}_{port}" if port is not None else COOKIE


def _same_token(presented: str, token: str) -> bool:
    return hmac.compare_digest(presented.encode("utf-8", "surrogateescape"), token.encode())


class TokenGuard:
    """ASGI middleware: 401 unless the request carries ``token`` (no guard when it is None)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value for key, value in scope["headers"]}
        if self.token is None:
            # Tokenless means loopback: refuse other Host names (DNS rebinding of a web page).
            if not loopback_host_header(headers.get("host", b"").decode("latin-1")):
                await _refuse(send, 403, b"forbidden: not a loopback Host")
                return
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        from_query = query.get("token", [None])[0]
        server = scope.get("server")
        name = cookie_name(server[1] if server and len(server) > 1 else None)
        presented = from_query or _bearer(headers) or _cookie(headers, name)
        if presented is None or not _same_token(presented, self.token):
            await _refuse(
                send, 401, b"unauthorized: this server needs its access token (?token=...)"
            )
            return
        if from_query is None:
            await self.app(scope, receive, send)
            return
        cookie = f"{name}={self.token}; Path=/; HttpOnly; SameSite=Strict"

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def _bearer(headers: dict[str, bytes]) -> str | None:
    value = headers.get("authorization", b"").decode("latin-1")
    return value[7:] if value.lower().startswith("bearer ") else None


def _cookie(headers: dict[str, bytes], name: str) -> str | None:
    raw = headers.get("cookie")
    if raw is None:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw.decode("latin-1"))
    except Exception:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def loopback_host_header(host: str) -> bool:
    """Whether an HTTP ``Host`` header names a loopback host (any port)."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[: name.find("]") + 1]
    elif ":" in name:
        name = name.rsplit(":", 1)[0]
    return name in _LOOPBACK_NAMES


async def _refuse(send: Send, status: int, message: bytes) -> None:
    body = b'{"error": "' + message + b'"}'
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
