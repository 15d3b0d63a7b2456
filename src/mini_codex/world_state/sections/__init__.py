"""The built-in WorldState sections, one module each (spec/codex-worldstate.md §2, DESIGN §4).

``BUILTIN_SECTION_ORDER`` is the order the runtime adds them to a step's ``WorldState``; extension
sections follow. Section IDs are persisted in rollouts: never rename one.
"""

from typing import Final

from mini_codex.world_state.sections.agents_md import AgentsMdSection, AgentsMdSnapshot
from mini_codex.world_state.sections.capture_notes import CaptureNotesSection
from mini_codex.world_state.sections.environments import (
    Environment,
    EnvironmentEntry,
    EnvironmentsSection,
    EnvironmentsSnapshot,
    EnvironmentStatus,
    NetworkPolicy,
)
from mini_codex.world_state.sections.model import ModelSection
from mini_codex.world_state.sections.permissions import (
    ApprovalPolicy,
    PermissionsSection,
    PermissionsSnapshot,
    SandboxMode,
)
from mini_codex.world_state.sections.tools import ToolsSection
from mini_codex.world_state.sections.workspace import WorkspaceSection

__all__ = [
    "BUILTIN_SECTION_ORDER",
    "AgentsMdSection",
    "AgentsMdSnapshot",
    "ApprovalPolicy",
    "CaptureNotesSection",
    "Environment",
    "EnvironmentEntry",
    "EnvironmentStatus",
    "EnvironmentsSection",
    "EnvironmentsSnapshot",
    "ModelSection",
    "NetworkPolicy",
    "PermissionsSection",
    "PermissionsSnapshot",
    "SandboxMode",
    "ToolsSection",
    "WorkspaceSection",
]

BUILTIN_SECTION_ORDER: Final[tuple[str, ...]] = (
    "model",
    "agents_md",
    "permissions",
    "environments",
    "environments_instructions",
    "workspace",
    "tools",
    "capture_notes",
)
"""IDs of the built-in sections in rendering order (``workspace`` and ``capture_notes`` are ours,
see DESIGN §4; ``capture_notes`` renders only when a capture skipped something;
``environments_instructions`` is added only with ``[features] deferred_executor``)."""
