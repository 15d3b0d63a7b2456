"""The per-step environments hook (issue 26): the readiness snapshot, its world-state view and
the tools that route to it.

* ``step_snapshot``: the turn's selections (never newer ones) with their current readiness, in
  selection order (``environments.manager.ThreadEnvironments.snapshot``).
* ``world_environments``: the snapshot as the ``environments`` section sees it — ready entries are
  ``available``, the primary is the first ready one, a failed one carries its error.
* ``route_tools``: no environment at all removes the shell and file tools (Codex's ``none``); a
  remote environment wraps ``exec_command``/``shell`` in ``tools.environment_routing`` and
  ``apply_patch`` in ``tools.remote_patch``; with two
  or more environments their schema gains ``environment_id``. One local environment changes
  nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from mini_codex.environments.manager import EnvironmentSnapshot, ThreadEnvironments
from mini_codex.runtime.contexts import TurnContext
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.environment_routing import ROUTED_TOOLS, EnvironmentRouted
from mini_codex.tools.remote_patch import RoutedPatch
from mini_codex.world_state.sections.environments import Environment, EnvironmentStatus

__all__ = ["route_tools", "step_snapshot", "world_environments"]

_ENVIRONMENT_TOOLS = ("exec_command", "write_stdin", "shell", "apply_patch", "view_image")


def step_snapshot(turn: TurnContext, manager: ThreadEnvironments) -> EnvironmentSnapshot:
    return manager.snapshot([selection.id for selection in turn.environments])


def world_environments(snapshot: EnvironmentSnapshot) -> tuple[Environment, ...]:
    primary = snapshot.primary
    status: dict[str, EnvironmentStatus] = {
        "ready": "available",
        "starting": "starting",
        "failed": "failed",
    }
    return tuple(
        Environment(
            id=entry.id,
            cwd=entry.cwd,
            status=status[entry.state],
            shell=entry.shell if entry.state == "ready" else None,
            is_primary=primary is not None and entry.id == primary.id,
            error=entry.error,
        )
        for entry in snapshot.entries
    )


def route_tools(
    registered: Sequence[RegisteredTool], snapshot: EnvironmentSnapshot
) -> list[RegisteredTool]:
    if not snapshot.entries:
        return [entry for entry in registered if entry.tool.spec.name not in _ENVIRONMENT_TOOLS]
    if all(entry.is_local for entry in snapshot.entries):
        return list(registered)
    routed: list[RegisteredTool] = []
    for entry in registered:
        name = entry.tool.spec.name if entry.namespace is None else None
        if name in ROUTED_TOOLS:
            entry = replace(entry, tool=EnvironmentRouted(entry.tool, advertise=snapshot.multiple))
        elif name == "apply_patch":
            entry = replace(entry, tool=RoutedPatch(entry.tool, advertise=snapshot.multiple))
        routed.append(entry)
    return routed
