"""The ``multi_agent`` world-state section: a session's child agents and their statuses.

Its snapshot is ``{"agents": {ID: {"nickname", "status", "open"}}}`` (``status`` in Codex's wire
form). It is persisted and diffed like every section (a full snapshot, then merge patches) and
renders nothing: Codex 0.169's v1 sessions show the model no multi-agent fragment (the recorded
requests in ``tests/fixtures/codex_subagents/`` have none); the model learns about its children
from the tool outputs, the ``<subagent_notification>`` messages and the ``<subagents>`` lines of
the ``environments`` section. A resumed parent restores its children from it
(:func:`restored_children`): a child that was ``running`` or ``pending_init`` when the process
died is ``interrupted``; every restored child is closed until ``resume_agent`` reopens it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from mini_codex.host.agents.child import Child
from mini_codex.host.agents.status import INTERRUPTED, AgentStatus
from mini_codex.jsonmerge import Json
from mini_codex.world_state.extensions import ExtensionContext, ExtensionSection

if TYPE_CHECKING:
    from mini_codex.runtime.session import Session


class _Children(Protocol):
    children: dict[str, Child]


__all__ = ["SECTION_ID", "MultiAgentExtension", "restored_children"]

SECTION_ID: Final = "multi_agent"


def _render(previous: Any) -> None:
    return None


class MultiAgentExtension:
    """Contributes the ``multi_agent`` section of one session's control."""

    def __init__(self, control: _Children) -> None:
        self.control = control

    def contribute(self, ctx: ExtensionContext) -> Sequence[ExtensionSection]:
        agents: dict[str, Json] = {
            child.id: {
                "nickname": child.nickname,
                "status": child.status.to_wire(),
                "open": child.open,
            }
            for child in self.control.children.values()
        }
        return [ExtensionSection(id=SECTION_ID, snapshot={"agents": agents}, render=_render)]


def restored_children(session: Session) -> list[Child]:
    """The children a resumed session recorded (none for a new session)."""
    baseline = session.history.world_state_baseline
    entry = baseline.get(SECTION_ID) if baseline is not None else None
    agents = entry.get("agents") if isinstance(entry, dict) else None
    if not isinstance(agents, dict):
        return []
    children = []
    for agent_id, recorded in agents.items():
        if not isinstance(recorded, dict):
            continue
        status = AgentStatus.from_wire(recorded.get("status"))
        if status.kind in ("running", "pending_init"):
            status = INTERRUPTED
        nickname = recorded.get("nickname")
        children.append(
            Child(
                id=agent_id,
                nickname=nickname if isinstance(nickname, str) else None,
                depth=1,
                status=status,
            )
        )
    return children
