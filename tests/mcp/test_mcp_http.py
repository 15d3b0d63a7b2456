"""Streamable HTTP against a real server on 127.0.0.1 (an ``MCPServer`` app under uvicorn, in
the test's event loop): custom headers and the bearer token from ``bearer_token_env_var`` are
sent, and a rejected token is a clear startup error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import uvicorn
from mcp_harness import make_server

from mini_codex.config import McpServerConfig
from mini_codex.mcp.client import StdioHttpClientFactory
from mini_codex.mcp.errors import McpStartupError
from mini_codex.mcp.results import McpCallOutcome
from mini_codex.mcp.runtime import McpRuntime

pytestmark = pytest.mark.anyio

Scope = dict[str, Any]


class RequireBearer:
    """ASGI middleware: 401 unless ``Authorization: Bearer <token>``; records request headers."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.seen.append(headers)
        if headers.get("authorization") != f"Bearer {self.token}":
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await self.app(scope, receive, send)


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[int]:
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        with anyio.fail_after(10):
            while not server.started:  # uvicorn offers no event to wait on  # noqa: ASYNC110
                await anyio.sleep(0.01)
        port: int = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield port
        finally:
            server.should_exit = True


async def test_headers_and_bearer_token_reach_the_server() -> None:
    app = RequireBearer(make_server("web").streamable_http_app(), token="s3cret")
    async with serving(app) as port:
        config = McpServerConfig(
            url=f"http://127.0.0.1:{port}/mcp",
            headers={"X-Team": "blue"},
            bearer_token_env_var="WEB_TOKEN",
        )
        factory = StdioHttpClientFactory({"WEB_TOKEN": "s3cret"})
        async with McpRuntime.open({"web": config}, factory=factory) as runtime:
            binding = await runtime.binding_for_step(required={"web"})
            assert await binding.call("mcp__web__echo", {"text": "hi"}) == McpCallOutcome(
                '{"result":"hi"}', True
            )
    assert app.seen
    assert {(h["authorization"], h["x-team"]) for h in app.seen} == {("Bearer s3cret", "blue")}


async def test_a_rejected_token_is_a_clear_startup_error() -> None:
    app = RequireBearer(make_server("web").streamable_http_app(), token="s3cret")
    async with serving(app) as port:
        config = McpServerConfig(
            url=f"http://127.0.0.1:{port}/mcp", bearer_token_env_var="WEB_TOKEN", required=True
        )
        factory = StdioHttpClientFactory({"WEB_TOKEN": "wrong"})
        async with McpRuntime.open({"web": config}, factory=factory) as runtime:
            with pytest.raises(McpStartupError) as failure:
                await runtime.wait_for_required()
    assert str(failure.value) == (
        "MCP server 'web' failed to start: Server returned an error response (code -32603)\n"
        f"HTTP:\nHTTP 401 Unauthorized from http://127.0.0.1:{port}/mcp"
    )
