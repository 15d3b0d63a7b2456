"""McpRuntime: concurrent start, atomic publication, serialized refresh, reuse, crash restart."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp_harness import MixedFactory, delayed_server, inprocess_config, make_server, toy_config

from mini_codex.config import McpServerConfig
from mini_codex.mcp.cache import CatalogCache
from mini_codex.mcp.errors import McpStartupError
from mini_codex.mcp.results import McpCallOutcome
from mini_codex.mcp.runtime import McpRuntime

pytestmark = pytest.mark.anyio


async def test_servers_start_concurrently_in_the_background() -> None:
    servers = {name: delayed_server(name, 0.4) for name in ("a", "b", "c")}
    configs = {name: inprocess_config() for name in servers}
    started = time.monotonic()
    async with McpRuntime.open(configs, factory=MixedFactory(servers)) as runtime:
        published = runtime.published
        assert published is not None
        assert time.monotonic() - started < 0.2  # publication does not wait for servers
        assert {c.status for c in published.connections.values()} == {"starting"}
        for connection in published.connections.values():
            await connection.wait_settled()
        elapsed = time.monotonic() - started
        assert {c.status for c in published.connections.values()} == {"ready"}
    assert elapsed < 0.4 * 1.5  # ≈ the slowest, not the sum (1.2 s)


async def test_refresh_reuses_unchanged_connections_and_replaces_changed_ones() -> None:
    factory = MixedFactory({"a": make_server("a"), "b1": make_server("b"), "b2": make_server("b")})
    configs = {"a": inprocess_config(args=("a",)), "b": inprocess_config(args=("b1",))}
    async with McpRuntime.open(configs, factory=factory) as runtime:
        first = runtime.published
        assert first is not None
        runtime.set_config({"a": configs["a"], "b": inprocess_config(args=("b2",))})
        assert runtime.dirty
        await runtime.refresh_if_dirty()
        second = runtime.published
        assert second is not None
        assert (first.generation, second.generation, runtime.dirty) == (1, 2, False)
        assert second.connections["a"] is first.connections["a"]
        assert second.connections["b"] is not first.connections["b"]
        assert second.config["b"].args == ("b2",)
        await runtime.refresh_if_dirty()  # nothing pending: nothing published
        assert runtime.published is second
    assert factory.opened == ["a", "b", "b"]


async def test_a_cancelled_refresh_remarks_dirty_and_the_next_step_refreshes() -> None:
    cancel_next: list[anyio.CancelScope] = []

    async def probe(phase: str) -> None:
        if cancel_next:
            cancel_next.pop().cancel()
        await anyio.lowlevel.checkpoint()

    factory = MixedFactory({"a": make_server("a"), "b": make_server("b")})
    async with McpRuntime.open({"a": inprocess_config()}, factory=factory, probe=probe) as runtime:
        runtime.set_config({"a": inprocess_config(), "b": inprocess_config()})
        with anyio.CancelScope() as scope:
            cancel_next.append(scope)
            await runtime.refresh_if_dirty()
        assert scope.cancelled_caught
        published = runtime.published
        assert published is not None
        assert (runtime.dirty, published.generation, sorted(published.config)) == (
            True,
            1,
            ["a"],
        )
        binding = await runtime.binding_for_step()
        assert runtime.dirty is False
        assert binding.generation == 2
        assert sorted(tool.name for tool in binding.tools) == [
            "mcp__a__add",
            "mcp__a__echo",
            "mcp__b__add",
            "mcp__b__echo",
        ]


async def test_refreshes_are_serialized_and_loop_until_nothing_is_pending() -> None:
    inside = 0
    most = 0
    runtime_ref: list[McpRuntime] = []

    async def probe(phase: str) -> None:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        if len(runtime_ref) == 1 and runtime_ref[0].refreshes == 1:
            runtime_ref[0].invalidate()  # an invalidation during publication: one more loop
        await anyio.sleep(0.05)
        inside -= 1

    async with McpRuntime.open({}, probe=probe) as runtime:
        runtime_ref.append(runtime)
        runtime.invalidate()
        async with anyio.create_task_group() as group:
            group.start_soon(runtime.refresh_if_dirty)
            group.start_soon(runtime.refresh_if_dirty)
        assert (most, runtime.refreshes, runtime.dirty) == (1, 3, False)


async def test_a_crashed_server_fails_its_calls_and_is_restarted_at_the_next_refresh(
    tmp_path: Path,
) -> None:
    factory = MixedFactory({"steady": make_server("steady")})
    configs = {"crashy": toy_config(), "steady": inprocess_config()}
    cache = CatalogCache(tmp_path / "mcp_cache")
    async with McpRuntime.open(configs, factory=factory, cache=cache, grace_s=0) as runtime:
        before = await runtime.binding_for_step(required={"crashy", "steady"})
        crashed = await before.call("mcp__crashy__crash", {})
        assert crashed == McpCallOutcome(
            "MCP server 'crashy' closed the connection (it exited or crashed): "
            "Connection closed (code -32000)",
            False,
        )
        lost = before.tool("mcp__crashy__echo")
        assert lost is not None
        assert (lost.connection.status, lost.connection.crashed, runtime.dirty) == (
            "failed",
            True,
            True,
        )
        assert await before.call("mcp__crashy__echo", {"text": "x"}) == crashed
        assert await before.call("mcp__steady__add", {"a": 1, "b": 1}) == McpCallOutcome(
            '{"result":2}', True
        )
        # The next step gets a fresh connection; the catalog cached on disk advertises its
        # tools at once, and a call waits for the restarted server.
        after = await runtime.binding_for_step()
        tool = after.tool("mcp__crashy__echo")
        assert tool is not None
        assert tool.connection is not lost.connection
        assert tool.from_cache
        assert await after.call("mcp__crashy__echo", {"text": "back"}) == McpCallOutcome(
            '{"result":"back"}', True
        )
        steady_before = before.tool("mcp__steady__add")
        steady_after = after.tool("mcp__steady__add")
        assert steady_before is not None
        assert steady_after is not None
        assert steady_after.connection is steady_before.connection
    assert factory.opened == ["crashy", "steady", "crashy"]


async def test_wait_for_required_raises_the_startup_error_of_a_required_server() -> None:
    configs = {
        "needed": McpServerConfig(command="/nonexistent/needed", required=True),
        "optional": McpServerConfig(command="/nonexistent/optional"),
    }
    async with McpRuntime.open(configs, factory=MixedFactory()) as runtime:
        with pytest.raises(McpStartupError) as failure:
            await runtime.wait_for_required()
    assert failure.value.server == "needed"
    assert str(failure.value) == (
        "MCP server 'needed' failed to start: command not found: /nonexistent/needed"
    )


async def test_disabled_servers_are_not_started() -> None:
    factory = MixedFactory({"on": make_server("on"), "off": make_server("off")})
    configs = {"on": inprocess_config(), "off": inprocess_config(enabled=False)}
    async with McpRuntime.open(configs, factory=factory) as runtime:
        binding = await runtime.binding_for_step(required={"on"})
    assert factory.opened == ["on"]
    assert [tool.name for tool in binding.tools] == ["mcp__on__add", "mcp__on__echo"]


async def test_closing_a_runtime_that_never_ran_returns_at_once() -> None:
    runtime = McpRuntime({"a": inprocess_config()})
    with anyio.fail_after(1):
        await runtime.aclose()
    assert runtime.published is None
