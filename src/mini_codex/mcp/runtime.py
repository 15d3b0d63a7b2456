"""McpRuntime: the session's MCP servers, published atomically (spec/codex-runtime.md §6.1–§6.3).

The runtime owns a task group (``run()``, started by the session in its own task group, or
``McpRuntime.open()`` standalone) in which every connection runs. Its state is one *published*
``McpConnectionSet`` (connections + config + cached catalogs), replaced as a whole:

* ``set_config()`` / ``invalidate()`` mark the runtime dirty; a crashed connection marks it dirty
  too. ``refresh_if_dirty()`` is serialized by a single-permit gate and loops until nothing is
  pending: it claims the dirty flag, reads the cached catalogs, reconciles with the previous set
  (a connection whose config is unchanged and that is starting or ready is *reused*; new, changed,
  failed-by-crash ones are started fresh) and publishes the new set. A refresh cancelled before it
  publishes re-marks the runtime dirty, so the next step refreshes again (§6.3, §10 case 33).
* Servers start concurrently, in the background; nothing waits for them except
  ``wait_for_required()`` (``exec`` fails fast when a ``required`` server cannot start) and the
  binding capture (``binding.py``).
* A step's binding keeps the exact connections it was captured from. Connections dropped by a
  refresh are *retired*, not closed at once: they are closed when a binding is next captured from a
  newer set (the steps of a session run one after another, so by then no older step can call them)
  or when the runtime closes.
* Catalogs of servers that became ready are written to the on-disk cache (``cache.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from mini_codex.config import McpServerConfig
from mini_codex.mcp.binding import McpBinding, McpConnectionSet, capture_binding
from mini_codex.mcp.cache import CatalogCache
from mini_codex.mcp.catalog import ServerCatalog
from mini_codex.mcp.client import ClientFactory, McpConnection, StdioHttpClientFactory
from mini_codex.mcp.errors import McpStartupError, McpUnavailableError

if TYPE_CHECKING:
    import mcp_types

__all__ = ["DEFAULT_GRACE_S", "McpRuntime", "RefreshProbe"]

DEFAULT_GRACE_S = 1.0

RefreshProbe = Callable[[str], Awaitable[None]]
"""Awaited with a phase name inside a refresh, after the dirty flag is claimed (tests cancel)."""


class McpRuntime:
    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        factory: ClientFactory | None = None,
        cache: CatalogCache | None = None,
        grace_s: float = DEFAULT_GRACE_S,
        probe: RefreshProbe | None = None,
    ) -> None:
        self._desired: dict[str, McpServerConfig] = dict(servers)
        self._factory: ClientFactory = factory or StdioHttpClientFactory()
        self._cache = cache
        self.grace_s = grace_s
        self._probe = probe
        self._pending = True
        self._reconnect = False
        self._gate = anyio.Lock()
        self._published: McpConnectionSet | None = None
        self._generation = 0
        self._retired: list[tuple[int, McpConnection]] = []
        self._tg: anyio.abc.TaskGroup | None = None
        self._stop = anyio.Event()
        self._running = False
        self._finished = anyio.Event()
        self.refreshes = 0
        """Number of publications (for tests and diagnostics)."""

    # --- lifecycle ---------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        servers: Mapping[str, McpServerConfig],
        *,
        factory: ClientFactory | None = None,
        cache: CatalogCache | None = None,
        grace_s: float = DEFAULT_GRACE_S,
        probe: RefreshProbe | None = None,
    ) -> AsyncIterator[McpRuntime]:
        """A runtime running in its own task group for the duration of the block."""
        runtime = cls(servers, factory=factory, cache=cache, grace_s=grace_s, probe=probe)
        async with anyio.create_task_group() as group:
            await group.start(runtime.run)
            try:
                yield runtime
            finally:
                with anyio.CancelScope(shield=True):
                    await runtime.aclose()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Own every connection's task until ``aclose()``; the first set is published on start."""
        self._running = True
        try:
            async with anyio.create_task_group() as group:
                self._tg = group
                await self.refresh_if_dirty()
                task_status.started()
                await self._stop.wait()
                for connection in self._all_connections():
                    connection.close()
        finally:
            self._tg = None
            self._finished.set()

    async def aclose(self) -> None:
        """Close every connection and wait until they are gone."""
        self._stop.set()
        if self._running:
            await self._finished.wait()

    def _all_connections(self) -> list[McpConnection]:
        found = [connection for _, connection in self._retired]
        if self._published is not None:
            found.extend(self._published.connections.values())
        return found

    # --- state -------------------------------------------------------------------------------

    @property
    def published(self) -> McpConnectionSet | None:
        return self._published

    @property
    def dirty(self) -> bool:
        return self._pending

    @property
    def config(self) -> Mapping[str, McpServerConfig]:
        return dict(self._desired)

    def invalidate(self, *, reconnect: bool = False) -> None:
        """Mark dirty; ``reconnect`` gives every server a fresh connection at the next refresh."""
        self._pending = True
        self._reconnect = self._reconnect or reconnect

    def set_config(self, servers: Mapping[str, McpServerConfig]) -> None:
        self._desired = dict(servers)
        self.invalidate()

    def _connection_lost(self, connection: McpConnection) -> None:
        self.invalidate()

    # --- refresh -----------------------------------------------------------------------------

    async def refresh_if_dirty(self) -> None:
        """Publish a new connection set if anything is pending (serialized; see the docstring)."""
        async with self._gate:
            while self._pending:
                self._pending = False
                published = False
                try:
                    await self._publish()
                    published = True
                finally:
                    if not published:
                        self._pending = True

    async def _publish(self) -> None:
        if self._probe is not None:
            await self._probe("refresh")
        desired = {name: config for name, config in self._desired.items() if config.enabled}
        cached = await anyio.to_thread.run_sync(self._load_cached, desired)
        previous = self._published
        reconnect, self._reconnect = self._reconnect, False
        connections: dict[str, McpConnection] = {}
        for name, config in sorted(desired.items()):
            old = previous.connections.get(name) if previous is not None else None
            reusable = old is not None and old.config == config and not reconnect
            if old is not None and reusable and old.status in ("starting", "ready"):
                connections[name] = old
            else:
                connections[name] = self._start(name, config)
        self._generation += 1
        self._published = McpConnectionSet(
            generation=self._generation,
            config=desired,
            connections=connections,
            cached=cached,
            grace_s=self.grace_s,
        )
        self.refreshes += 1
        if previous is not None:
            kept = {id(connection) for connection in connections.values()}
            for connection in previous.connections.values():
                if id(connection) not in kept:
                    self._retired.append((self._generation, connection))

    def _load_cached(self, desired: Mapping[str, McpServerConfig]) -> dict[str, ServerCatalog]:
        if self._cache is None:
            return {}
        found: dict[str, ServerCatalog] = {}
        for name, config in desired.items():
            catalog = self._cache.load(name, config)
            if catalog is not None:
                found[name] = catalog
        return found

    def _start(self, name: str, config: McpServerConfig) -> McpConnection:
        if self._tg is None:
            raise RuntimeError("McpRuntime.run() is not running")
        connection = McpConnection(name, config, self._factory, on_lost=self._connection_lost)
        self._tg.start_soon(self._supervise, connection, name=f"mcp:{name}")
        return connection

    async def _supervise(self, connection: McpConnection) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(connection.run)
            await connection.wait_settled()
            catalog = connection.catalog
            if connection.status == "ready" and catalog is not None and self._cache is not None:
                await anyio.to_thread.run_sync(
                    self._cache.store, connection.server, connection.config, catalog
                )

    # --- steps -------------------------------------------------------------------------------

    async def wait_for_required(self) -> None:
        """Wait until every ``required`` server settled; raise the first one's startup error."""
        await self.refresh_if_dirty()
        conn_set = self._published
        if conn_set is None:
            return
        required = [c for c in conn_set.connections.values() if c.config.required]
        async with anyio.create_task_group() as group:
            for connection in required:
                group.start_soon(connection.wait_settled)
        for connection in required:
            if connection.status != "ready":
                raise McpStartupError(
                    connection.server,
                    connection.error or f"MCP server {connection.server!r} did not start",
                )

    async def binding_for_step(self, required: Collection[str] = ()) -> McpBinding:
        """Refresh if dirty, then capture the binding of one step from the published set."""
        await self.refresh_if_dirty()
        conn_set = self._published
        if conn_set is None:
            return McpBinding.empty()
        binding = await capture_binding(conn_set, required)
        self._close_retired(before=conn_set.generation)
        return binding

    def _close_retired(self, *, before: int) -> None:
        keep: list[tuple[int, McpConnection]] = []
        for generation, connection in self._retired:
            if generation <= before:
                connection.close()
            else:
                keep.append((generation, connection))
        self._retired = keep

    # --- prompts -----------------------------------------------------------------------------

    def prompts(self) -> dict[str, tuple[mcp_types.Prompt, ...]]:
        """Server → the prompts of every ready server of the published set."""
        conn_set = self._published
        if conn_set is None:
            return {}
        return {
            name: connection.catalog.prompts
            for name, connection in sorted(conn_set.connections.items())
            if connection.status == "ready" and connection.catalog is not None
        }

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str] | None = None
    ) -> mcp_types.GetPromptResult:
        """``prompts/get`` on ``server``; raises ``McpError`` (unknown server included)."""
        await self.refresh_if_dirty()
        conn_set = self._published
        connection = conn_set.connections.get(server) if conn_set is not None else None
        if connection is None:
            raise McpUnavailableError(server, f"unknown MCP server {server!r}")
        if connection.status == "starting":
            with anyio.move_on_after(connection.config.startup_timeout_sec):
                await connection.wait_settled()
        return await connection.get_prompt(
            name, dict(arguments or {}), connection.config.tool_timeout_sec
        )
