"""McpConnection against real servers: in process, stdio subprocesses, failures and timeouts."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from mcp_harness import MixedFactory, delayed_server, inprocess_config, make_server, toy_config

from mini_codex.config import McpServerConfig
from mini_codex.mcp.client import McpConnection
from mini_codex.mcp.errors import McpCallError, McpUnavailableError

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def running(connection: McpConnection) -> AsyncIterator[McpConnection]:
    async with anyio.create_task_group() as group:
        group.start_soon(connection.run)
        try:
            yield connection
        finally:
            connection.close()


async def test_in_process_server_becomes_ready_and_answers() -> None:
    factory = MixedFactory({"toy": make_server("toy")})
    async with running(McpConnection("toy", inprocess_config(), factory)) as connection:
        await connection.wait_settled()
        assert connection.status == "ready"
        assert connection.catalog is not None
        assert [tool.name for tool in connection.catalog.tools] == ["echo", "add"]
        assert connection.catalog.title == "toy"
        result = await connection.call_tool("add", {"a": 2, "b": 3}, timeout_s=5)
        assert (result.structured_content, result.is_error) == ({"result": 5}, False)
    assert connection.status == "closed"


async def test_a_call_times_out_and_the_connection_stays_usable() -> None:
    server = make_server("toy")

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return "done"

    factory = MixedFactory({"toy": server})
    async with running(McpConnection("toy", inprocess_config(), factory)) as connection:
        await connection.wait_settled()
        assert connection.status == "ready", connection.error
        started = time.monotonic()
        with pytest.raises(
            McpCallError, match=r"^MCP server 'toy': tool 'slow' timed out after 0.3 s$"
        ):
            await connection.call_tool("slow", {"seconds": 10}, timeout_s=0.3)
        assert time.monotonic() - started < 0.3 + 0.2
        result = await connection.call_tool("echo", {"text": "still here"}, timeout_s=5)
        assert result.structured_content == {"result": "still here"}
        assert connection.status == "ready"


async def test_a_missing_command_fails_startup_with_a_clear_error() -> None:
    config = McpServerConfig(command="/nonexistent/mcp-server")
    async with running(McpConnection("gone", config, MixedFactory())) as connection:
        await connection.wait_settled()
    assert connection.status == "failed"
    assert connection.error == (
        "MCP server 'gone' failed to start: command not found: /nonexistent/mcp-server"
    )


async def test_a_startup_failure_quotes_the_server_stderr() -> None:
    script = "import sys; sys.stderr.write('config error: API_KEY is missing\\n'); sys.exit(2)"
    config = McpServerConfig(command=sys.executable, args=("-c", script))
    async with running(McpConnection("bad", config, MixedFactory())) as connection:
        await connection.wait_settled()
    assert connection.status == "failed"
    assert connection.error is not None
    assert connection.error == (
        "MCP server 'bad' failed to start: it exited or closed the connection during the handshake"
        "\nstderr:\nconfig error: API_KEY is missing"
    )


async def test_a_server_that_never_answers_fails_after_the_startup_timeout() -> None:
    config = toy_config("--delay", "inf", startup_timeout_sec=0.5)
    started = time.monotonic()
    async with running(McpConnection("mute", config, MixedFactory())) as connection:
        await connection.wait_settled()
        elapsed = time.monotonic() - started  # failed at the timeout, before the cleanup
    assert (connection.status, connection.error) == (
        "failed",
        "MCP server 'mute' did not start within 0.5 s",
    )
    assert 0.5 <= elapsed < 0.5 + 0.25


async def test_a_missing_bearer_token_variable_fails_startup() -> None:
    config = McpServerConfig(url="http://127.0.0.1:9/mcp", bearer_token_env_var="MY_TOKEN")
    async with running(McpConnection("web", config, MixedFactory(environ={}))) as connection:
        await connection.wait_settled()
    assert connection.error == (
        "MCP server 'web' failed to start: environment variable MY_TOKEN "
        "(bearer_token_env_var) is not set"
    )


async def test_closing_a_starting_connection_ends_it_as_closed() -> None:
    factory = MixedFactory({"slow": delayed_server("slow", float("inf"))})
    async with running(McpConnection("slow", inprocess_config(), factory)) as connection:
        await anyio.sleep(0.05)
        assert connection.status == "starting"
        connection.close()
        await connection.wait_settled()
    assert connection.status == "closed"
    with pytest.raises(McpUnavailableError, match=r"^MCP server 'slow' is closed$"):
        await connection.call_tool("ping", {}, timeout_s=1)
