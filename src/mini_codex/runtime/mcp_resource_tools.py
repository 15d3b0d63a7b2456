"""Codex's three resource tools over one step's ``McpBinding`` (shapes: ``mcp/resources.py``).

Offered only when a server of the step declares the ``resources`` capability. Without a
``server`` argument the listings cover every such server (servers queried concurrently, results
in server-name order; a failing server is left out and named in an ``errors`` note at the end of
the text); with one, one page of that server (``cursor`` pages on). Calls are parallel-capable
and go through the step's binding, so a later refresh never changes what they address.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from mini_codex.mcp.binding import McpBinding
from mini_codex.mcp.errors import McpError
from mini_codex.mcp.resources import (
    LIST_RESOURCES,
    LIST_TEMPLATES,
    READ_RESOURCE,
    listing_output,
    read_output,
    resource_tool_parameters,
)
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

if TYPE_CHECKING:
    from pydantic import BaseModel

    from mini_codex.mcp.client import McpConnection

__all__ = ["McpResourceTool", "resource_registered_tools"]

_DESCRIPTIONS = {
    LIST_RESOURCES: "List the resources MCP servers offer: documents, files, schemas or other "
    "data a server shares as context. Use resources before searching the web for the same.",
    LIST_TEMPLATES: "List the resource templates MCP servers offer: parameterized resource URIs "
    "(fill in the parameters, then read the resource with read_mcp_resource).",
    READ_RESOURCE: "Read one resource of an MCP server, by server name and resource URI.",
}

Page = tuple[list["BaseModel"], str | None]


async def _resources_page(connection: McpConnection, cursor: str | None, limit_s: float) -> Page:
    result = await connection.list_resources(cursor, limit_s)
    return list(result.resources), result.next_cursor


async def _templates_page(connection: McpConnection, cursor: str | None, limit_s: float) -> Page:
    result = await connection.list_resource_templates(cursor, limit_s)
    return list(result.resource_templates), result.next_cursor


class McpResourceTool:
    """One of ``list_mcp_resources``, ``list_mcp_resource_templates``, ``read_mcp_resource``."""

    def __init__(self, binding: McpBinding, name: str) -> None:
        self.binding = binding
        self._spec = ToolSpec(
            name=name,
            description=_DESCRIPTIONS[name],
            kind="function",
            parameters=resource_tool_parameters(name),
            supports_parallel=True,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        name = self._spec.name
        try:
            arguments: Any = orjson.loads(payload) if payload.strip() else {}
        except orjson.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict) or not all(
            isinstance(arguments.get(key), str | None) for key in ("server", "cursor", "uri")
        ):
            return ToolOutput.failure(
                f"Invalid arguments for {name}: expected a JSON object of strings, "
                f"got {payload[:200]!r}"
            )
        server, cursor = arguments.get("server"), arguments.get("cursor")
        try:
            if name == READ_RESOURCE:
                text = await self._read(server, arguments.get("uri"))
            else:
                key = "resources" if name == LIST_RESOURCES else "resourceTemplates"
                page = _resources_page if name == LIST_RESOURCES else _templates_page
                text = await self._list(key, page, server, cursor)
        except (McpError, ValueError) as exc:
            return self._output(arguments, str(exc), success=False)
        return self._output(arguments, text, success=True)

    def _output(self, arguments: dict[str, Any], text: str, *, success: bool) -> ToolOutput:
        details = {
            "server": arguments.get("server") or "codex",
            "tool": self._spec.name,
            "arguments": arguments,
            "result": {"content": [{"type": "text", "text": text}], "structured_content": None}
            if success
            else None,
        }
        return ToolOutput(text=text, success=success, details=details)

    def _connection(self, server: str) -> McpConnection:
        connection = self.binding.resource_servers.get(server)
        if connection is None:
            known = ", ".join(sorted(self.binding.resource_servers)) or "none"
            raise ValueError(f"unknown MCP server {server!r} (servers with resources: {known})")
        return connection

    async def _list(
        self,
        key: str,
        page: Callable[[McpConnection, str | None, float], Awaitable[Page]],
        server: str | None,
        cursor: str | None,
    ) -> str:
        if server is not None:
            connection = self._connection(server)
            items, next_cursor = await page(connection, cursor, connection.config.tool_timeout_sec)
            return listing_output(
                key, ((server, item) for item in items), server=server, next_cursor=next_cursor
            )
        if cursor is not None:
            raise ValueError("a cursor needs the server it came from (pass server as well)")
        found: dict[str, list[BaseModel]] = {}
        errors: dict[str, str] = {}

        async def one(name: str, connection: McpConnection) -> None:
            try:
                items: list[BaseModel] = []
                next_cursor: str | None = None
                for _ in range(100):  # every page of every server
                    more, next_cursor = await page(
                        connection, next_cursor, connection.config.tool_timeout_sec
                    )
                    items.extend(more)
                    if next_cursor is None:
                        break
                found[name] = items
            except McpError as exc:
                errors[name] = str(exc).splitlines()[0]

        async with anyio.create_task_group() as group:
            for name, connection in self.binding.resource_servers.items():
                group.start_soon(one, name, connection)
        entries = [(name, item) for name in sorted(found) for item in found[name]]
        text = listing_output(key, entries, server=None)
        if errors:
            text += "\nerrors: " + "; ".join(errors[name] for name in sorted(errors))
        return text

    async def _read(self, server: str | None, uri: str | None) -> str:
        if server is None or uri is None:
            raise ValueError(f"{READ_RESOURCE} needs both server and uri")
        connection = self._connection(server)
        result = await connection.read_resource(uri, connection.config.tool_timeout_sec)
        return read_output(server, uri, list(result.contents))


def resource_registered_tools(binding: McpBinding) -> list[RegisteredTool]:
    """The three resource tools, when a server of ``binding`` declares resources."""
    if not binding.resource_servers:
        return []
    return [
        RegisteredTool(McpResourceTool(binding, name))
        for name in (LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE)
    ]
