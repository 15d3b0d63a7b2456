"""Opening a session whose config turns on sub-agents (``features.multi_agent``).

:func:`open_with_agents` is what :func:`mini_codex.host.open.open_options` does for such a
session: it gives the session an :class:`~.control.AgentControl` when its depth is below
``agents.max_depth`` — the ``multi_agent_v1`` tools, the ``multi_agent`` world-state section,
the ``<subagents>`` lines of its ``environments`` section, a task group its children run in —
and opens it. A session at the depth limit opens as any other, without the spawn tools.
Leaving the block closes the children first, then the session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from mini_codex.host.agents.child import Opener
from mini_codex.host.agents.control import AgentControl
from mini_codex.host.agents.section import MultiAgentExtension
from mini_codex.host.agents.tools import agent_tools
from mini_codex.host.assemble import SessionOptions, assemble, default_tools, uses_unified_exec
from mini_codex.runtime.tool_router import RegisteredTool

if TYPE_CHECKING:
    from mini_codex.runtime.session import Session

__all__ = ["base_tools", "open_with_agents"]


def base_tools(options: SessionOptions) -> list[RegisteredTool]:
    """The built-in tools of a session of ``options`` (fresh ones unless ``options.tools``)."""
    if options.tools is not None:
        return list(options.tools)
    config = options.config
    return default_tools(config, unified_exec=uses_unified_exec(config, options.client))


@asynccontextmanager
async def open_with_agents(options: SessionOptions, opener: Opener) -> AsyncIterator[Session]:
    """Open ``options`` (see the module docstring); ``opener`` opens each child's session
    (``host.open.open_options``, passed in so that host stays the one way sessions open)."""
    from mini_codex.runtime.session import Session

    if options.agent_depth >= options.config.agents.max_depth:
        settings, services = assemble(options)
        async with Session.open(settings, services) as session:
            yield session
        return
    control = AgentControl(
        options,
        depth=options.agent_depth,
        child_tools=lambda depth: base_tools(replace(options, agent_depth=depth)),
        opener=opener,
    )
    front_end = options.on_event

    def on_event(event: Any) -> None:
        control.on_parent_event(event)
        if front_end is not None:
            front_end(event)

    parent = replace(
        options,
        tools=[*base_tools(options), *agent_tools(control)],
        extensions=[*options.extensions, MultiAgentExtension(control)],
        on_event=on_event,
    )
    settings, services = assemble(parent)
    services = msgspec.structs.replace(
        services, capture=msgspec.structs.replace(services.capture, subagents=control.roster)
    )
    async with anyio.create_task_group() as task_group:
        control.start(task_group)
        try:
            async with Session.open(settings, services) as session:
                control.attach(session)
                session.agents = control
                try:
                    yield session
                finally:
                    with anyio.CancelScope(shield=True):
                        await control.aclose()
        finally:
            task_group.cancel_scope.cancel()
