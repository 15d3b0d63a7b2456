"""Codex's ``exec --json`` event schema (codex-rs ``exec/src/exec_events.rs``), as data.

One JSON object per line: ``thread.started {thread_id}``, ``turn.started``, ``item.started`` /
``item.updated`` / ``item.completed {item}``, ``turn.completed {usage}``, ``turn.failed {error}``
and the top-level ``error {message}``. An item is ``{id, type, ...details}`` with ``type`` one of
``agent_message``, ``reasoning``, ``command_execution``, ``file_change``, ``mcp_tool_call``,
``todo_list``, ``collab_tool_call`` or ``error``. Every field is always written (explicit
``null`` included), as Codex does. Field order follows the recorded Codex 0.169 output
(``tests/fixtures/codex_exec``).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AgentMessageItem",
    "CollabAgentState",
    "CollabToolCallItem",
    "CommandExecutionItem",
    "ErrorItem",
    "ExecEvent",
    "ExecItem",
    "FileChange",
    "FileChangeItem",
    "ItemCompleted",
    "ItemStarted",
    "ItemUpdated",
    "McpToolCallError",
    "McpToolCallItem",
    "McpToolCallResult",
    "ReasoningItem",
    "ThreadError",
    "ThreadStarted",
    "TodoEntry",
    "TodoListItem",
    "TurnCompleted",
    "TurnError",
    "TurnFailed",
    "TurnStarted",
    "Usage",
    "exec_event_from_json",
]

ItemStatus = Literal["in_progress", "completed", "failed"]


class _ExecModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self) -> dict[str, Any]:
        """The JSON object Codex prints (every field, nulls included)."""
        return self.model_dump(mode="json")


# --- items -----------------------------------------------------------------------------------


class AgentMessageItem(_ExecModel):
    id: str
    type: Literal["agent_message"] = "agent_message"
    text: str


class ReasoningItem(_ExecModel):
    id: str
    type: Literal["reasoning"] = "reasoning"
    text: str


class CommandExecutionItem(_ExecModel):
    id: str
    type: Literal["command_execution"] = "command_execution"
    command: str
    aggregated_output: str
    exit_code: int | None
    status: Literal["in_progress", "completed", "failed", "declined"]


class FileChange(_ExecModel):
    path: str
    kind: Literal["add", "delete", "update"]


class FileChangeItem(_ExecModel):
    id: str
    type: Literal["file_change"] = "file_change"
    changes: tuple[FileChange, ...]
    status: ItemStatus


class McpToolCallResult(_ExecModel):
    content: tuple[dict[str, Any], ...]
    structured_content: Any = None


class McpToolCallError(_ExecModel):
    message: str


class McpToolCallItem(_ExecModel):
    id: str
    type: Literal["mcp_tool_call"] = "mcp_tool_call"
    server: str
    tool: str
    arguments: Any
    result: McpToolCallResult | None
    error: McpToolCallError | None
    status: ItemStatus


class TodoEntry(_ExecModel):
    text: str
    completed: bool


class TodoListItem(_ExecModel):
    id: str
    type: Literal["todo_list"] = "todo_list"
    items: tuple[TodoEntry, ...]


class ErrorItem(_ExecModel):
    """A non-fatal problem (a warning), shown as an item."""

    id: str
    type: Literal["error"] = "error"
    message: str


class CollabAgentState(_ExecModel):
    status: str
    message: str | None


class CollabToolCallItem(_ExecModel):
    """A ``multi_agent_v1`` tool call (recorded: ``tests/fixtures/codex_subagents``); ``tool`` is
    ``spawn_agent``, ``send_input``, ``wait`` (for ``wait_agent`` and ``resume_agent``, as Codex
    0.169 prints them) or ``close_agent``."""

    id: str
    type: Literal["collab_tool_call"] = "collab_tool_call"
    tool: str
    sender_thread_id: str
    receiver_thread_ids: tuple[str, ...]
    prompt: str | None
    agents_states: dict[str, CollabAgentState]
    status: ItemStatus


ExecItem: TypeAlias = (
    AgentMessageItem
    | CollabToolCallItem
    | ReasoningItem
    | CommandExecutionItem
    | FileChangeItem
    | McpToolCallItem
    | TodoListItem
    | ErrorItem
)


# --- events ----------------------------------------------------------------------------------


class Usage(_ExecModel):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0


class TurnError(_ExecModel):
    message: str


class ThreadStarted(_ExecModel):
    type: Literal["thread.started"] = "thread.started"
    thread_id: str


class TurnStarted(_ExecModel):
    type: Literal["turn.started"] = "turn.started"


class TurnCompleted(_ExecModel):
    type: Literal["turn.completed"] = "turn.completed"
    usage: Usage


class TurnFailed(_ExecModel):
    type: Literal["turn.failed"] = "turn.failed"
    error: TurnError


class ItemStarted(_ExecModel):
    type: Literal["item.started"] = "item.started"
    item: ExecItem = Field(discriminator="type")


class ItemUpdated(_ExecModel):
    type: Literal["item.updated"] = "item.updated"
    item: ExecItem = Field(discriminator="type")


class ItemCompleted(_ExecModel):
    type: Literal["item.completed"] = "item.completed"
    item: ExecItem = Field(discriminator="type")


class ThreadError(_ExecModel):
    """A fatal error of the stream (printed before ``turn.failed``)."""

    type: Literal["error"] = "error"
    message: str


ExecEvent: TypeAlias = (
    ThreadStarted
    | TurnStarted
    | TurnCompleted
    | TurnFailed
    | ItemStarted
    | ItemUpdated
    | ItemCompleted
    | ThreadError
)


class _Envelope(BaseModel):
    event: ExecEvent = Field(discriminator="type")


def exec_event_from_json(data: dict[str, Any]) -> ExecEvent:
    """Parse one ``exec --json`` line's object (raises pydantic's ValidationError)."""
    return _Envelope.model_validate({"event": data}).event
