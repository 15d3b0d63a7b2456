"""Events of the session event stream that are never persisted in a rollout.

The session emits one ordered stream of events (``SessionEvent``): the persisted Codex events of
``events.py`` (``task_started``, ``task_complete``, ``turn_aborted``, ``user_message``,
``agent_message``, ``token_count``) plus the live-only events below. Every event is a
``WireModel`` so ``--json`` can print it as one JSON line.
"""

from __future__ import annotations

import base64
from typing import Any, Literal, TypeAlias

from mini_codex.protocol._base import WireModel
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)
from mini_codex.protocol.events import (
    AgentMessageEvent,
    TaskComplete,
    TaskStarted,
    TokenCount,
    TurnAborted,
    UserMessageEvent,
)


class SessionConfigured(WireModel):
    type: Literal["session_configured"] = "session_configured"
    session_id: str
    model: str
    cwd: str
    rollout_path: str | None = None
    resumed: bool = False


class StepStarted(WireModel):
    """A step was captured and its request is about to be sent."""

    type: Literal["step_started"] = "step_started"
    turn_id: str
    step_id: str
    sequence: int
    world_state_changed: tuple[str, ...] = ()


class AgentMessageDelta(WireModel):
    type: Literal["agent_message_delta"] = "agent_message_delta"
    delta: str


class ReasoningDelta(WireModel):
    type: Literal["reasoning_delta"] = "reasoning_delta"
    delta: str


class ItemCompleted(WireModel):
    """A response item was recorded into history."""

    type: Literal["item_completed"] = "item_completed"
    turn_id: str
    item: dict[str, Any]


class ToolCallBegin(WireModel):
    type: Literal["tool_call_begin"] = "tool_call_begin"
    call_id: str
    name: str
    step_id: str
    payload: str


class ToolCallEnd(WireModel):
    type: Literal["tool_call_end"] = "tool_call_end"
    call_id: str
    name: str
    output: str
    success: bool | None = None
    duration_s: float = 0.0
    details: dict[str, Any] | None = None
    """Structured facts of the result (``ToolOutput.details``); set only when the tool gave them."""


class ExecCommandOutputDelta(WireModel):
    """A piece of a running command's output, for a live tail (Codex's
    ``exec_command_output_delta``). ``chunk`` is the raw bytes, base64-encoded (they may split a
    UTF-8 sequence); ``stream`` is ``stdout`` (stdout and stderr are merged, as the model sees
    them). Coalesced by the runtime (``runtime/output_deltas.py``); never persisted."""

    type: Literal["exec_command_output_delta"] = "exec_command_output_delta"
    call_id: str
    stream: Literal["stdout", "stderr"]
    chunk: str

    @classmethod
    def of(cls, call_id: str, data: bytes) -> ExecCommandOutputDelta:
        chunk = base64.b64encode(data).decode("ascii")
        return cls(call_id=call_id, stream="stdout", chunk=chunk)

    def data(self) -> bytes:
        """The chunk's bytes."""
        return base64.b64decode(self.chunk)


class StreamErrorEvent(WireModel):
    """A retryable model error; the request is retried ("Reconnecting... n/max")."""

    type: Literal["stream_error"] = "stream_error"
    message: str
    attempt: int
    max_retries: int
    delay_s: float


class ErrorEvent(WireModel):
    type: Literal["error"] = "error"
    message: str
    turn_id: str | None = None


class WarningEvent(WireModel):
    type: Literal["warning"] = "warning"
    message: str


class ContextCompacted(WireModel):
    """The history was replaced by a compaction (spec/codex-runtime.md §8.3 step 8)."""

    type: Literal["context_compacted"] = "context_compacted"
    turn_id: str | None = None
    trigger: Literal["pre_turn", "mid_turn", "model_downshift", "manual"] = "manual"
    window_number: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    trimmed_items: int = 0


class ShutdownComplete(WireModel):
    type: Literal["shutdown_complete"] = "shutdown_complete"


SessionEvent: TypeAlias = (
    SessionConfigured
    | TaskStarted
    | TaskComplete
    | TurnAborted
    | UserMessageEvent
    | AgentMessageEvent
    | TokenCount
    | ExecApprovalRequest
    | ApplyPatchApprovalRequest
    | SafetyDecision
    | StepStarted
    | AgentMessageDelta
    | ReasoningDelta
    | ItemCompleted
    | ToolCallBegin
    | ToolCallEnd
    | ExecCommandOutputDelta
    | StreamErrorEvent
    | ErrorEvent
    | WarningEvent
    | ContextCompacted
    | ShutdownComplete
)
