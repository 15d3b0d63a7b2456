"""Agent statuses and the texts the parent's model sees about its children (Codex 0.169 shapes).

- :class:`AgentStatus`: one of ``pending_init``, ``running``, ``interrupted``, ``shutdown``,
  ``not_found``, ``completed`` (with the final message, or null) and ``errored`` (with the error);
  :meth:`AgentStatus.to_wire` is Codex's JSON: a bare string, or ``{"completed": msg}`` /
  ``{"errored": msg}`` (recorded in ``tests/fixtures/codex_subagents/``).
- :func:`notification_text`: the ``<subagent_notification>`` user message Codex injects into the
  parent's history when a child reaches a final status; its JSON names the child by
  ``agent_path`` (the thread id in v1), as the recording shows.
- :func:`roster_line`: one ``- ID: NICKNAME`` line of the ``<subagents>`` block of the
  ``environments`` section (Codex: ``session_prefix.rs`` ``format_subagent_context_line``).
- :func:`compact_json`: JSON as Codex's serde writes it (no spaces).
- :data:`NICKNAMES`: the names children are called by, drawn in order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "NICKNAMES",
    "NOTIFICATION_END",
    "NOTIFICATION_START",
    "AgentStatus",
    "StatusKind",
    "compact_json",
    "notification_text",
    "roster_line",
]

StatusKind = Literal[
    "pending_init", "running", "interrupted", "completed", "errored", "shutdown", "not_found"
]

NOTIFICATION_START: Final = "<subagent_notification>"
NOTIFICATION_END: Final = "</subagent_notification>"

NICKNAMES: Final = (
    "Sagan", "Poincare", "Noether", "Curie", "Turing", "Hopper", "Lovelace", "Euler",
    "Gauss", "Meitner", "Feynman", "Franklin", "Hypatia", "Ramanujan", "Kepler", "Darwin",
)  # fmt: skip


@dataclass(frozen=True)
class AgentStatus:
    kind: StatusKind
    message: str | None = None
    """The final message (``completed``, may be None) or the error (``errored``)."""

    @property
    def is_final(self) -> bool:
        """What ``wait_agent`` waits for: completed, errored, shutdown or not found."""
        return self.kind in ("completed", "errored", "shutdown", "not_found")

    def to_wire(self) -> Any:
        if self.kind == "completed":
            return {"completed": self.message}
        if self.kind == "errored":
            return {"errored": self.message or ""}
        return self.kind

    @classmethod
    def from_wire(cls, value: Any) -> AgentStatus:
        """The inverse of :meth:`to_wire` (unknown shapes read as ``not_found``)."""
        if isinstance(value, dict) and len(value) == 1:
            ((kind, message),) = value.items()
            if kind in ("completed", "errored"):
                return cls(kind, message if isinstance(message, str) else None)
        if value in ("pending_init", "running", "interrupted", "shutdown", "not_found"):
            return cls(value)
        return cls("not_found")

    def item_state(self) -> dict[str, Any]:
        """The ``agents_states`` entry of an ``exec --json`` collab item: ``{status, message}``."""
        return {"status": self.kind, "message": self.message}


PENDING_INIT: Final = AgentStatus("pending_init")
RUNNING: Final = AgentStatus("running")
SHUTDOWN: Final = AgentStatus("shutdown")
NOT_FOUND: Final = AgentStatus("not_found")
INTERRUPTED: Final = AgentStatus("interrupted")


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def notification_text(agent_id: str, status: AgentStatus) -> str:
    payload = compact_json({"agent_path": agent_id, "status": status.to_wire()})
    return f"{NOTIFICATION_START}\n{payload}\n{NOTIFICATION_END}"


def roster_line(agent_id: str, nickname: str | None) -> str:
    return f"- {agent_id}: {nickname}" if nickname else f"- {agent_id}"
