"""One MCP server connection on the official ``mcp`` SDK (stdio or streamable HTTP).

``McpConnection.run()`` is a long-running task (started by the runtime in its task group) that owns
the SDK ``Client`` for the connection's whole life, because the SDK's context managers must be
entered and left by the same task:

    starting ──(handshake + tools/list within startup_timeout_sec)──▶ ready ──(close)──▶ closed
        │                                                               │
        └──(spawn error, handshake error, timeout)──▶ failed ◀──(crash)──┘

A crash is noticed when a request finds the connection closed: the connection becomes ``failed``
(``crashed``), its calls fail with a clear message, and ``on_lost`` tells the runtime to replace it
at the next refresh. Other connections are unaffected. A stdio server's stderr goes to a temporary
file (the *server log*) whose tail is quoted when the server fails to start; for streamable HTTP
the log gets one line per HTTP error status (which the SDK does not report), e.g.
``HTTP 401 Unauthorized from http://127.0.0.1:3001/mcp``.

What does not belong here: how a client is opened (``transports.py``: stdio, HTTP, bearer,
OAuth, elicitation; re-exported here), which connections exist (``runtime.py``), what a step may
call (``binding.py``), naming and result conversion (``naming.py``, ``results.py``).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TextIO, TypeVar, cast

import anyio
import mcp_types
from mcp.client.client import Client

from mini_codex.config import McpServerConfig
from mini_codex.mcp.catalog import ServerCatalog
from mini_codex.mcp.errors import (
    McpCallError,
    McpError,
    McpUnavailableError,
    describe_exception,
    is_connection_closed,
    is_error,
    is_timeout,
    map_mcp_errors,
)
from mini_codex.mcp.oauth import McpAuthError
from mini_codex.mcp.transports import ClientFactory, StdioHttpClientFactory

__all__ = [
    "ClientFactory",
    "ConnectionStatus",
    "McpConnection",
    "StdioHttpClientFactory",
    "list_catalog",
]

ConnectionStatus = Literal["starting", "ready", "failed", "closed"]
_R = TypeVar("_R")

_MAX_LIST_PAGES = 100
_STDERR_TAIL_BYTES = 2000


async def list_catalog(client: Client) -> ServerCatalog:
    """Every page of ``tools/list`` (and ``prompts/list`` when the server has prompts), the
    server's title and instructions, and whether it declares resources."""
    capabilities = client.server_capabilities
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    prompts: list[mcp_types.Prompt] = []
    if capabilities is not None and capabilities.prompts is not None:
        cursor = None
        for _ in range(_MAX_LIST_PAGES):
            prompt_page = await client.list_prompts(cursor=cursor)
            prompts.extend(prompt_page.prompts)
            cursor = prompt_page.next_cursor
            if cursor is None:
                break
    info = client.server_info
    title = (info.title or info.name) if info is not None else None
    return ServerCatalog(
        tools=tuple(tools),
        title=title,
        instructions=client.instructions,
        resources=capabilities is not None and capabilities.resources is not None,
        prompts=tuple(prompts),
    )


def _open_errlog() -> TextIO:
    return cast(TextIO, tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace"))


def _stderr_tail(errlog: TextIO | None) -> str:
    """The last lines of the server log (read without moving the offset a child shares)."""
    if errlog is None:
        return ""
    try:
        fd = errlog.fileno()
        size = os.fstat(fd).st_size
        data = os.pread(fd, _STDERR_TAIL_BYTES, max(0, size - _STDERR_TAIL_BYTES))
    except (OSError, ValueError):
        return ""
    lines: list[str] = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.strip() and (not lines or lines[-1] != line):  # repeated lines once
            lines.append(line)
    return "\n".join(lines[-5:])


class McpConnection:
    """One server connection; ``run()`` must be running (in the runtime's task group)."""

    def __init__(
        self,
        server: str,
        config: McpServerConfig,
        factory: ClientFactory,
        *,
        on_lost: Callable[[McpConnection], None] | None = None,
    ) -> None:
        self.server = server
        self.config = config
        self._factory = factory
        self._on_lost = on_lost
        self.status: ConnectionStatus = "starting"
        self.error: str | None = None
        """Why the connection failed (startup error or crash), for the model and the user."""
        self.crashed = False
        """True when a ready connection was lost (the runtime restarts it at the next refresh)."""
        self.needs_login = False
        """The server refused the connection for want of a (valid) OAuth login."""
        self.catalog: ServerCatalog | None = None
        self.started_at = time.monotonic()
        self.ready_at: float | None = None
        self._client: Client | None = None
        self._scope: anyio.CancelScope | None = None
        self._settled = anyio.Event()
        self._done = anyio.Event()
        self._close_requested = False
        self._limit = anyio.Semaphore(config.max_concurrent_calls)

    def __repr__(self) -> str:
        return f"<McpConnection {self.server} {self.status}>"

    @property
    def settled(self) -> bool:
        """Startup is over (ready, failed or closed)."""
        return self.status != "starting"

    async def wait_settled(self) -> None:
        await self._settled.wait()

    def _settle(self, status: ConnectionStatus, error: str | None = None) -> None:
        if self.status in ("failed", "closed"):
            return
        self.status = status
        if error is not None:
            self.error = error
        self._settled.set()

    async def run(self) -> None:
        """Start the server, publish its catalog, keep the client open until closed or lost."""
        errlog = _open_errlog()
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._close_requested:
                    scope.cancel()
                async with anyio.create_task_group() as group:
                    group.start_soon(self._watch_startup, errlog)
                    await self._serve(errlog)
            if scope.cancelled_caught and self.status == "starting":
                self._settle("closed")
        finally:
            self._client = None
            if self.status in ("starting", "ready"):
                self.status = "closed"
                self._settled.set()
            errlog.close()
            self._done.set()

    async def _watch_startup(self, errlog: TextIO | None) -> None:
        """Fail the connection when startup exceeds its timeout (before the SDK cleans up)."""
        timeout = self.config.startup_timeout_sec
        with anyio.move_on_after(timeout):
            await self._settled.wait()
            return
        if self.status == "starting" and not self._close_requested:
            message = f"MCP server {self.server!r} did not start within {timeout:g} s"
            self._settle("failed", self._with_stderr(message, errlog))
            if self._scope is not None:
                self._scope.cancel()

    async def _serve(self, errlog: TextIO | None) -> None:
        try:
            async with self._factory(self.server, self.config, errlog) as client:
                catalog = await list_catalog(client)
                self._client, self.catalog = client, catalog
                self.ready_at = time.monotonic()
                self._settle("ready")
                await anyio.sleep_forever()
        except McpAuthError as exc:
            self.needs_login = True
            self._settle("failed", str(exc))
        except McpError as exc:
            self._settle("failed", self._with_stderr(str(exc), errlog))
        except (Exception, BaseExceptionGroup) as exc:
            if not is_error(exc):
                raise  # cancellation wrapped in a group
            if self.status == "starting":
                message = f"MCP server {self.server!r} failed to start: "
                if is_connection_closed(exc):
                    message += "it exited or closed the connection during the handshake"
                else:
                    message += describe_exception(exc)
                self._settle("failed", self._with_stderr(message, errlog))
            else:
                self._lose(f"MCP server {self.server!r} failed: {describe_exception(exc)}")

    def _with_stderr(self, message: str, errlog: TextIO | None) -> str:
        tail = _stderr_tail(errlog)
        label = "stderr" if self.config.command is not None else "HTTP"
        return f"{message}\n{label}:\n{tail}" if tail else message

    def _lose(self, error: str) -> None:
        """A ready connection is gone: fail its calls from now on and ask for a restart."""
        if self.status != "ready":
            return
        self.status = "failed"
        self.crashed = True
        self.error = error
        self._client = None
        if self._scope is not None:
            self._scope.cancel()
        if self._on_lost is not None:
            self._on_lost(self)

    def close(self) -> None:
        """Ask ``run()`` to shut the connection down (returns at once)."""
        self._close_requested = True
        if self._scope is not None:
            self._scope.cancel()

    async def aclose(self) -> None:
        self.close()
        await self._done.wait()

    async def call_tool(
        self, tool: str, arguments: dict[str, Any] | None, timeout_s: float
    ) -> mcp_types.CallToolResult:
        """Call ``tool`` with a per-call timeout; raises ``McpError`` subclasses."""
        return await self._request(
            f"tool {tool!r}",
            timeout_s,
            lambda client: client.call_tool(tool, arguments, read_timeout_seconds=timeout_s),
        )

    async def list_resources(
        self, cursor: str | None, timeout_s: float
    ) -> mcp_types.ListResourcesResult:
        return await self._request(
            "resources/list", timeout_s, lambda client: client.list_resources(cursor=cursor)
        )

    async def list_resource_templates(
        self, cursor: str | None, timeout_s: float
    ) -> mcp_types.ListResourceTemplatesResult:
        return await self._request(
            "resources/templates/list",
            timeout_s,
            lambda client: client.list_resource_templates(cursor=cursor),
        )

    async def read_resource(self, uri: str, timeout_s: float) -> mcp_types.ReadResourceResult:
        return await self._request(
            f"resource {uri!r}", timeout_s, lambda client: client.read_resource(uri)
        )

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None, timeout_s: float
    ) -> mcp_types.GetPromptResult:
        return await self._request(
            f"prompt {name!r}", timeout_s, lambda client: client.get_prompt(name, arguments)
        )

    async def _request(
        self, what: str, timeout_s: float, send: Callable[[Client], Awaitable[_R]]
    ) -> _R:
        """One request with a timeout, at most ``max_concurrent_calls`` at once per server."""
        client = self._client
        if self.status != "ready" or client is None:
            raise McpUnavailableError(self.server, self.unavailable_reason())
        try:
            async with self._limit:
                with map_mcp_errors(self.server, "call", what):
                    with anyio.fail_after(timeout_s + 1.0):
                        return await send(client)
        except McpUnavailableError as exc:
            self._lose(str(exc))
            raise
        except McpCallError as exc:
            cause = exc.__cause__
            if cause is not None and is_timeout(cause):
                raise McpCallError(
                    self.server,
                    f"MCP server {self.server!r}: {what} timed out after {timeout_s:g} s",
                ) from cause
            if cause is not None and is_connection_closed(cause):
                self._lose(str(exc))
            raise

    def unavailable_reason(self) -> str:
        match self.status:
            case "starting":
                return f"MCP server {self.server!r} is still starting"
            case "failed":
                return self.error or f"MCP server {self.server!r} failed"
            case "closed":
                return f"MCP server {self.server!r} is closed"
            case "ready":
                return f"MCP server {self.server!r} is not connected"
