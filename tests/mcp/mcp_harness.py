"""Helpers for the MCP tests: real servers (in-process ``MCPServer`` objects and the stdio
``servers/toy_server.py``), configs that launch them, and a client factory that connects named
servers in process while launching every other one for real.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp.client.client import Client
from mcp.server.mcpserver import MCPServer

from mini_codex.config import McpServerConfig
from mini_codex.mcp.client import ClientFactory, StdioHttpClientFactory

HERE = Path(__file__).parent
TOY_SERVER = HERE / "servers" / "toy_server.py"
REPO = HERE.parent.parent
EVERYTHING_BIN = REPO / "node_modules" / ".bin" / "mcp-server-everything"


def toy_config(*args: str, **options: Any) -> McpServerConfig:
    """Launch ``servers/toy_server.py`` over stdio with extra command-line ``args``."""
    return McpServerConfig(command=sys.executable, args=(str(TOY_SERVER), *args), **options)


def inprocess_config(**options: Any) -> McpServerConfig:
    """A config for a server the test factory connects in process (the command is unused)."""
    return McpServerConfig(command="in-process", **options)


def everything_available() -> str | None:
    """None when the npm everything server can run here, else why not."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not EVERYTHING_BIN.exists():
        return "node_modules is not installed (run `npm ci` at the repository root)"
    return None


def make_server(name: str = "toy", *, extra: tuple[str, ...] = ()) -> MCPServer:
    """An in-process server with echo / add / fail tools (and ``extra_<x>`` tools)."""
    server = MCPServer(name, instructions=f"The {name} server.")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    for item in extra:

        def extra_tool(item: str = item) -> str:
            return item

        server.add_tool(extra_tool, name=f"extra_{item}", description=f"Extra tool {item}.")
    return server


def delayed_server(name: str, delay: float) -> MCPServer:
    """An in-process server whose startup takes ``delay`` seconds (``inf``: never ready)."""

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
        await anyio.sleep(delay)
        yield {}

    server: MCPServer[Any] = MCPServer(name, lifespan=lifespan)

    @server.tool()
    def ping() -> str:
        """Answer pong."""
        return "pong"

    return server


class MixedFactory:
    """Connects in-process servers, launches the others for real.

    A config made by ``inprocess_config(args=(KEY,))`` connects ``inprocess[KEY]``; any other
    server whose name is a key of ``inprocess`` connects that one; the rest really start.
    """

    def __init__(
        self,
        inprocess: Mapping[str, MCPServer] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.inprocess = dict(inprocess or {})
        self.real: ClientFactory = StdioHttpClientFactory(environ)
        self.opened: list[str] = []

    def __call__(
        self, server: str, config: McpServerConfig, errlog: TextIO | None
    ) -> AbstractAsyncContextManager[Client]:
        self.opened.append(server)
        if config.command == "in-process" and config.args:
            return self._inprocess(self.inprocess[config.args[0]])
        if server in self.inprocess:
            return self._inprocess(self.inprocess[server])
        return self.real(server, config, errlog)

    @asynccontextmanager
    async def _inprocess(self, server: MCPServer) -> AsyncIterator[Client]:
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(server, cache=None))
            yield client
