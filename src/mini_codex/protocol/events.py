"""``event_msg`` payloads, under the names the Codex CLI writes.

``turn_started`` / ``turn_complete`` are accepted as aliases of ``task_started`` / ``task_complete``
(the original name is kept for round-tripping; our writer uses the Codex names). Unknown event types
are kept as ``UnknownEvent``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Tag, TypeAdapter

from mini_codex.protocol._base import WireModel
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)


class TaskStarted(WireModel):
    type: Literal["task_started", "turn_started"] = "task_started"
    turn_id: str | None = None
    model_context_window: int | None = None


class TaskComplete(WireModel):
    type: Literal["task_complete", "turn_complete"] = "task_complete"
    turn_id: str | None = None
    last_agent_message: str | None = None


class TurnAborted(WireModel):
    type: Literal["turn_aborted"] = "turn_aborted"
    turn_id: str | None = None
    reason: str | None = None


class UserMessageEvent(WireModel):
    type: Literal["user_message"] = "user_message"
    message: str
    images: list[Any] | None = None


class AgentMessageEvent(WireModel):
    type: Literal["agent_message"] = "agent_message"
    message: str


class ThreadRolledBack(WireModel):
    type: Literal["thread_rolled_back"] = "thread_rolled_back"
    num_turns: int


class TokenCount(WireModel):
    """Token usage; ``info`` and ``rate_limits`` are kept as free-form JSON (shapes vary by era)."""

    type: Literal["token_count"] = "token_count"
    info: dict[str, Any] | None = None
    rate_limits: dict[str, Any] | None = None


class UnknownEvent(WireModel):
    type: str


_EVENT_TAGS: dict[str, str] = {
    "task_started": "task_started",
    "turn_started": "task_started",
    "task_complete": "task_complete",
    "turn_complete": "task_complete",
    "turn_aborted": "turn_aborted",
    "user_message": "user_message",
    "agent_message": "agent_message",
    "thread_rolled_back": "thread_rolled_back",
    "token_count": "token_count",
    "exec_approval_request": "exec_approval_request",
    "apply_patch_approval_request": "apply_patch_approval_request",
    "safety_decision": "safety_decision",
}


def _event_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return _EVENT_TAGS.get(kind, "unknown") if isinstance(kind, str) else "unknown"


EventMsg: TypeAlias = Annotated[
    Annotated[TaskStarted, Tag("task_started")]
    | Annotated[TaskComplete, Tag("task_complete")]
    | Annotated[TurnAborted, Tag("turn_aborted")]
    | Annotated[UserMessageEvent, Tag("user_message")]
    | Annotated[AgentMessageEvent, Tag("agent_message")]
    | Annotated[ThreadRolledBack, Tag("thread_rolled_back")]
    | Annotated[TokenCount, Tag("token_count")]
    | Annotated[ExecApprovalRequest, Tag("exec_approval_request")]
    | Annotated[ApplyPatchApprovalRequest, Tag("apply_patch_approval_request")]
    | Annotated[SafetyDecision, Tag("safety_decision")]
    | Annotated[UnknownEvent, Tag("unknown")],
    Discriminator(_event_tag),
]

EVENT_MSG_ADAPTER: TypeAdapter[EventMsg] = TypeAdapter(EventMsg)
