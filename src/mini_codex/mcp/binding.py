"""The per-step MCP binding and its capture (spec/codex-runtime.md §6.4, §6.5).

A ``McpConnectionSet`` is one published generation of the runtime: the connections, the config
they were started from, the catalogs cached on disk at publication, and state shared by every
capture from that set (the optional-server grace deadline, the notes already reported).

``capture_binding(set, required)`` builds an immutable ``McpBinding``:

* Phase 1, concurrently, for servers still starting: a ``required`` server, or one named in
  ``required`` (``mcp://NAME`` mentions), is waited for without limit (its startup timeout bounds
  it); an optional server with a cached catalog is not waited for; any other optional server is
  waited for until ONE deadline shared by the whole connection set, set on first use to
  ``now + grace`` — so a never-ready server delays the first capture by the grace, and later
  captures not at all.
* Phase 2, per server: ready → its live catalog; still starting with a cached catalog → the cached
  tools (a call waits for the server); still starting without one, or failed → omitted, with a
  note for the ``tools`` section and a notice reported once per connection set.
* The tools are filtered (``enabled_tools``/``disabled_tools``), named (``naming.py``) across all
  servers at once, and bound to the exact connection they came from. A step's calls go through its
  binding only, so a later refresh never changes what an earlier step executes.

When every connection has settled, the binding is cached on the set and reused while nothing
changes (§6.5).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from mini_codex.config import McpServerConfig
from mini_codex.mcp.catalog import (
    ServerCatalog,
    filter_tools,
    is_model_visible,
    model_parameters,
    namespace_description,
)
from mini_codex.mcp.errors import McpError
from mini_codex.mcp.naming import QualifiedTool, qualify_tools, sanitize_name_part, server_namespace
from mini_codex.mcp.results import McpCallOutcome, call_result_output

if TYPE_CHECKING:  # the client module imports the MCP SDK (~0.5 s), loaded only when used
    from mini_codex.mcp.client import McpConnection

__all__ = [
    "BoundTool",
    "McpBinding",
    "McpConnectionSet",
    "capture_binding",
    "pending_note",
]


class McpConnectionSet(msgspec.Struct, eq=False):
    generation: int
    config: Mapping[str, McpServerConfig]
    connections: Mapping[str, McpConnection]
    cached: Mapping[str, ServerCatalog] = msgspec.field(default_factory=dict)
    """Catalogs read from disk at publication (advertised while a server starts)."""
    grace_s: float = 1.0
    grace_deadline: float | None = None
    """The optional-server deadline shared by every capture from this set (set on first use)."""
    reported: set[str] = msgspec.field(default_factory=set)
    """Notices already reported for this set (each is reported once)."""
    cached_binding: tuple[tuple[object, ...], McpBinding] | None = None

    def shared_deadline(self, now: float) -> float:
        if self.grace_deadline is None:
            self.grace_deadline = now + self.grace_s
        return self.grace_deadline


class BoundTool(msgspec.Struct, frozen=True):
    qualified: QualifiedTool
    description: str
    parameters: dict[str, Any]
    visible: bool
    """False: callable but not advertised (``_meta.ui.visibility`` without ``"model"``)."""
    connection: McpConnection
    timeout_s: float
    from_cache: bool
    """Advertised from the on-disk catalog while the server was still starting."""

    @property
    def name(self) -> str:
        return self.qualified.flat_name


@dataclass(frozen=True)
class McpBinding:
    """Exactly what one step advertises and may call."""

    generation: int | None
    tools: tuple[BoundTool, ...] = ()
    namespaces: Mapping[str, str] = field(default_factory=dict)
    """Namespace → description of every server with tools in this binding."""
    pending: Mapping[str, str] = field(default_factory=dict)
    """Namespace → note of every omitted server (still starting, or failed)."""
    instructions: Mapping[str, str] = field(default_factory=dict)
    """Namespace → the server's instructions (the namespace's description on the wire)."""
    resource_servers: Mapping[str, McpConnection] = field(default_factory=dict)
    """Server → connection of every server of this binding that declares resources (the
    resource tools are offered when this is not empty)."""
    catalogs: Mapping[str, ServerCatalog] = field(default_factory=dict)
    """Server → the catalog this binding was built from (prompts, for front ends)."""
    notices: tuple[str, ...] = ()
    """Notes not reported before for this connection set (the caller warns with them)."""

    @classmethod
    def empty(cls) -> McpBinding:
        return cls(generation=None)

    @cached_property
    def _by_name(self) -> dict[str, BoundTool]:
        return {bound.name: bound for bound in self.tools}

    def tool(self, name: str) -> BoundTool | None:
        return self._by_name.get(name)

    async def call(self, name: str, arguments: dict[str, Any] | None) -> McpCallOutcome:
        """Call a tool of this binding; failures come back as an unsuccessful outcome."""
        bound = self.tool(name)
        if bound is None:
            return McpCallOutcome(f"unknown MCP tool {name!r} in this step", False)
        connection = bound.connection
        if connection.status == "starting":
            with anyio.move_on_after(bound.timeout_s):
                await connection.wait_settled()
        try:
            result = await connection.call_tool(bound.qualified.tool, arguments, bound.timeout_s)
        except McpError as exc:
            return McpCallOutcome(str(exc), False)
        return call_result_output(result)


def pending_note(server: str, connection: McpConnection) -> str:
    if connection.status == "starting":
        return f"MCP server {server} is still starting; its tools are not available yet."
    if connection.error:
        return connection.error.splitlines()[0]
    return f"MCP server {server} is unavailable."


async def _wait_until(connection: McpConnection, deadline: float) -> None:
    with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
        await connection.wait_settled()


def _stable_key(conn_set: McpConnectionSet) -> tuple[object, ...] | None:
    if not all(connection.settled for connection in conn_set.connections.values()):
        return None
    return tuple(
        (name, id(connection), connection.status, id(connection.catalog))
        for name, connection in sorted(conn_set.connections.items())
    )


async def capture_binding(
    conn_set: McpConnectionSet,
    required: Collection[str] = (),
    *,
    now: Callable[[], float] = anyio.current_time,
) -> McpBinding:
    """The binding of one step; see the module docstring."""
    key = _stable_key(conn_set)
    if key is not None and conn_set.cached_binding is not None:
        cached_key, cached = conn_set.cached_binding
        if cached_key == key:
            return cached

    async with anyio.create_task_group() as group:
        for name, connection in conn_set.connections.items():
            if connection.settled:
                continue
            if connection.config.required or name in required:
                group.start_soon(connection.wait_settled)
            elif name in conn_set.cached or conn_set.grace_s <= 0:
                continue
            else:
                group.start_soon(_wait_until, connection, conn_set.shared_deadline(now()))

    catalogs: dict[str, tuple[ServerCatalog, bool]] = {}
    pending: dict[str, str] = {}
    for name, connection in sorted(conn_set.connections.items()):
        if connection.status == "ready" and connection.catalog is not None:
            catalogs[name] = (connection.catalog, False)
        elif connection.status == "starting" and name in conn_set.cached:
            catalogs[name] = (conn_set.cached[name], True)
        else:
            namespace = sanitize_name_part(server_namespace(name))
            pending[namespace] = pending_note(name, connection)

    binding = _bind(conn_set, catalogs, pending)
    notices = tuple(note for note in pending.values() if note not in conn_set.reported)
    conn_set.reported.update(notices)
    key = _stable_key(conn_set)
    if key is not None:
        conn_set.cached_binding = (key, binding)
    return replace(binding, notices=notices) if notices else binding


def _bind(
    conn_set: McpConnectionSet,
    catalogs: Mapping[str, tuple[ServerCatalog, bool]],
    pending: Mapping[str, str],
) -> McpBinding:
    raw: dict[tuple[str, str], Any] = {}
    for server, (catalog, _) in catalogs.items():
        for tool in filter_tools(conn_set.config[server], catalog.tools):
            raw.setdefault((server, tool.name), tool)
    qualified = qualify_tools(raw)
    tools: list[BoundTool] = []
    names_by_namespace: dict[str, list[str]] = {}
    server_of_namespace: dict[str, str] = {}
    for entry in qualified.tools:
        tool = raw[(entry.server, entry.tool)]
        catalog, from_cache = catalogs[entry.server]
        visible = is_model_visible(tool)
        tools.append(
            BoundTool(
                qualified=entry,
                description=tool.description or tool.title or "",
                parameters=model_parameters(tool),
                visible=visible,
                connection=conn_set.connections[entry.server],
                timeout_s=conn_set.config[entry.server].tool_timeout_sec,
                from_cache=from_cache,
            )
        )
        server_of_namespace[entry.namespace] = entry.server
        if visible:
            names_by_namespace.setdefault(entry.namespace, []).append(entry.tool)
    instructions = {
        namespace: text
        for namespace, server in server_of_namespace.items()
        if (text := (catalogs[server][0].instructions or "").strip())
    }
    namespaces = {
        namespace: namespace_description(
            server_of_namespace[namespace],
            catalogs[server_of_namespace[namespace]][0].title,
            names,
        )
        for namespace, names in names_by_namespace.items()
    }
    return McpBinding(
        generation=conn_set.generation,
        tools=tuple(tools),
        namespaces=namespaces,
        pending=dict(pending),
        instructions=instructions,
        resource_servers={
            server: conn_set.connections[server]
            for server, (catalog, _) in catalogs.items()
            if catalog.resources
        },
        catalogs={server: catalog for server, (catalog, _) in catalogs.items()},
    )
