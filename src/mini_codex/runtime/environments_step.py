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
* ``selection_ids`` / ``recorded_selections``: a turn's selections (a resumed thread keeps its
  recorded ones) and what a new thread records in ``session_meta``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from msgspec.structs import replace

from mini_codex.environments.manager import EnvironmentSnapshot, ThreadEnvironments
from mini_codex.runtime.contexts import EnvironmentSelection, TurnContext
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.environment_routing import ROUTED_TOOLS, EnvironmentRouted
from mini_codex.tools.remote_exec import RemoteSessionInput
from mini_codex.tools.remote_patch import RoutedPatch
from mini_codex.world_state.sections.environments import Environment, EnvironmentStatus

__all__ = [
    "ThreadSelections",
    "recorded_selections",
    "route_tools",
    "selection_ids",
    "step_snapshot",
    "world_environments",
]

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
        elif name == "write_stdin":
            entry = replace(entry, tool=RemoteSessionInput(entry.tool))
        elif name == "apply_patch":
            entry = replace(entry, tool=RoutedPatch(entry.tool, advertise=snapshot.multiple))
        routed.append(entry)
    return routed


class ThreadSelections:
    """A thread's environment selections: what each turn selects (``selection_ids``; a resumed
    thread keeps its recorded ones, warned about once) and what a new thread records."""

    def __init__(self, manager: ThreadEnvironments | None, cwd: Path) -> None:
        self.manager = manager
        self.cwd = cwd
        self.restored: list[str] | None = None
        """The selections a resumed thread recorded (None: a new thread, or none recorded)."""

    def for_turn(self, warn: Callable[[str], None]) -> tuple[EnvironmentSelection, ...]:
        ids = selection_ids(self.manager, self.restored, warn)
        if self.restored is not None:
            self.restored = ids  # the skipped ones are told once
        return tuple(EnvironmentSelection(id=i, cwd=self.cwd) for i in ids)


def selection_ids(
    manager: ThreadEnvironments | None,
    restored: list[str] | None,
    warn: Callable[[str], None],
) -> list[str]:
    """A turn's selections: a resumed session's recorded ones (ids no longer configured are
    skipped, with a warning), else the configured default order (``local`` without any)."""
    configured = manager.selection_ids() if manager is not None else ["local"]
    if restored is None:
        return configured
    for missing in [i for i in restored if i not in configured]:
        warn(
            f"environment `{missing}` of the resumed session is not configured here; it is skipped"
        )
    return [i for i in restored if i in configured]


def recorded_selections(
    manager: ThreadEnvironments | None, cwd: str
) -> list[dict[str, str]] | None:
    """The selections a new thread records in its ``session_meta`` (None: no environments)."""
    if manager is None:
        return None
    return [{"environment_id": i, "cwd": cwd} for i in manager.selection_ids()]
