"""The HTTP app: the JSON API (docs/ui.md), Server-Sent Events for live files, the static pages.

Read-only: GET only, rollout files are never opened for writing. Blocking work (the index, reading
and replaying files) runs in worker threads. The access-token guard wraps everything when a token
is set (``auth.py``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mini_codex.errors import MiniCodexError
from mini_codex.web.auth import ASGIApp, TokenGuard
from mini_codex.web.inspector import BadRequest, Inspector, NotFound, parse_offset

__all__ = ["CSP", "POLL_INTERVAL_S", "create_app", "static_text"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The server's Content-Security-Policy: its own script and stylesheet only, nothing inline."""
_SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
_LINE_BLOCK = 1 << 20

POLL_INTERVAL_S = 0.25
"""How often a followed rollout is checked for growth."""
_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}


def static_text(name: str) -> str:
    return files("mini_codex.web").joinpath("static", name).read_text(encoding="utf-8")


def _json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status, media_type="application/json")


def _error(error: Exception) -> Response:
    """The one-line JSON error, its status by kind: a bad request 400, an unknown session or
    step 404, any other failure (a bad rollout, an unreadable file) 422."""
    status = 400 if isinstance(error, BadRequest) else 404 if isinstance(error, NotFound) else 422
    return _json({"error": " ".join(str(error).split())}, status)


def create_app(inspector: Inspector, token: str | None = None) -> ASGIApp:
    async def call(function: Any, *args: Any) -> Response:
        try:
            return _json(await anyio.to_thread.run_sync(function, *args))
        except (MiniCodexError, OSError) as error:
            return _error(error)

    async def sessions(request: Request) -> Response:
        return await call(inspector.sessions)

    async def session(request: Request) -> Response:
        before = request.query_params.get("before")
        try:
            start = None if before is None else parse_offset(before, "before")
        except BadRequest as error:
            return _error(error)
        return await call(inspector.session, request.path_params["id"], start)

    async def line(request: Request) -> Response:
        """One whole line of a rollout (a text cut in the documents), streamed in blocks."""
        try:
            offset = parse_offset(request.path_params["offset"], "offset")
            path, start, size = await anyio.to_thread.run_sync(
                inspector.line_range, request.path_params["id"], offset
            )
        except (MiniCodexError, OSError) as error:
            return _error(error)
        return StreamingResponse(
            _line_blocks(path, start, size, request), media_type="text/plain; charset=utf-8"
        )

    async def world_state(request: Request) -> Response:
        params = request.path_params
        return await call(inspector.step_world_state, params["id"], params["step_id"])

    async def step_request(request: Request) -> Response:
        params = request.path_params
        return await call(inspector.step_request, params["id"], params["step_id"])

    async def events(request: Request) -> Response:
        try:
            path = await anyio.to_thread.run_sync(inspector.path_of, request.path_params["id"])
        except (BadRequest, NotFound) as error:
            return _error(error)
        return StreamingResponse(
            _follow(path, request),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    async def page(request: Request) -> Response:
        return Response(static_text("index.html"), media_type="text/html")

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        suffix = Path(name).suffix
        if name not in ("app.js", "app.css"):
            return Response("not found", 404)
        return Response(static_text(name), media_type=_TYPES[suffix])

    app = Starlette(
        routes=[
            Route("/", page),
            Route("/static/{name}", asset),
            Route("/api/sessions", sessions),
            Route("/api/sessions/{id}", session),
            Route("/api/sessions/{id}/steps/{step_id}/world_state", world_state),
            Route("/api/sessions/{id}/steps/{step_id}/request", step_request),
            Route("/api/sessions/{id}/events", events),
            Route("/api/sessions/{id}/lines/{offset}", line),
        ]
    )
    return TokenGuard(_SecurityHeaders(app), token)


class _SecurityHeaders:
    """Every response carries the CSP (no inline script, no other origin) and ``nosniff``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in _SECURITY_HEADERS.items()]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


async def _line_blocks(path: Path, start: int, size: int, request: Request) -> AsyncIterator[bytes]:
    """The bytes of the line starting at ``start``, up to its newline, until the client leaves."""
    async with await anyio.open_file(path, "rb") as handle:
        await handle.seek(start)
        position = start
        while position < size:
            block = await handle.read(min(_LINE_BLOCK, size - position))
            if not block:
                return
            newline = block.find(b"\n")
            if newline >= 0:
                yield block[:newline]
                return
            yield block
            position += len(block)
            if await request.is_disconnected():
                return


async def _follow(path: Path, request: Request) -> AsyncIterator[bytes]:
    """``size`` events whenever the file grows (and once at the start), until the client leaves."""
    last = -1
    yield b"retry: 1000\n\n"
    while not await request.is_disconnected():
        try:
            size = (await anyio.Path(path).stat()).st_size
        except OSError:
            size = -1
        if size != last:
            last = size
            yield f"event: size\ndata: {json.dumps({'size': size})}\n\n".encode()
        await anyio.sleep(POLL_INTERVAL_S)
