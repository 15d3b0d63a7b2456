"""v2 ``ThreadItem`` objects (camelCase, as in Codex's schema) from our items. Pure.

The exec items come from the one ``ExecEventMapper`` (``runtime/exec_events.py``), which decides
what a tool call *is* (a command, a file change, an MCP call, a plan); this module only changes
their shape: ``command_execution`` → ``commandExecution`` with ``commandActions``,
``file_change`` → ``fileChange`` with ``{path, kind: {type}, diff}``, ``mcp_tool_call`` →
``mcpToolCall``, ``reasoning`` → ``reasoning {summary: [text]}``, ``agent_message`` →
``agentMessage``, ``collab_tool_call`` → ``collabAgentToolCall`` (the field and enum names of
Codex 0.169's v2 ``ThreadItem::CollabAgentToolCall``, read from its binary's schema strings:
``tool`` ``spawnAgent|sendInput|wait|closeAgent``, ``senderThreadId``, ``receiverThreadIds``,
``prompt``, ``model``, ``reasoningEffort``, ``agentsStates {ID: {status, message}}`` with
camelCase statuses). The item id of a tool item is its call id (as in Codex).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from mini_codex.protocol.exec_events import (
    AgentMessageItem,
    CollabToolCallItem,
    CommandExecutionItem,
    ExecItem,
    FileChangeItem,
    McpToolCallItem,
    ReasoningItem,
    TodoListItem,
)

__all__ = [
    "command_text",
    "context_compaction_item",
    "plan_item",
    "thread_item",
    "token_usage",
    "user_message_item",
]

JsonDict = dict[str, Any]

_STATUS = {"in_progress": "inProgress", "completed": "completed", "failed": "failed"}


def command_text(command: Any) -> str:
    """A command as one string (an argv list is shell-quoted)."""
    if isinstance(command, list):
        return shlex.join(str(part) for part in command)
    return str(command)


def _command_item(item: CommandExecutionItem, cwd: str, extra: Mapping[str, Any]) -> JsonDict:
    status = "inProgress" if item.status == "in_progress" else item.status
    return {
        "type": "commandExecution",
        "id": item.id,
        "command": item.command,
        "cwd": cwd,
        "processId": None,
        "source": "agent",
        "status": extra.get("status", status),
        "commandActions": [{"type": "unknown", "command": item.command}],
        "aggregatedOutput": item.aggregated_output if item.status != "in_progress" else None,
        "exitCode": item.exit_code,
        "durationMs": extra.get("durationMs"),
    }


def _file_change_item(item: FileChangeItem, extra: Mapping[str, Any]) -> JsonDict:
    diffs: Mapping[str, str] = extra.get("diffs") or {}
    status = extra.get("status", _STATUS[item.status])
    return {
        "type": "fileChange",
        "id": item.id,
        "changes": [
            {"path": change.path, "kind": {"type": change.kind}, "diff": diffs.get(change.path, "")}
            for change in item.changes
        ],
        "status": status,
    }


def _mcp_item(item: McpToolCallItem, extra: Mapping[str, Any]) -> JsonDict:
    result = (
        {"content": list(item.result.content), "structuredContent": item.result.structured_content}
        if item.result is not None
        else None
    )
    return {
        "type": "mcpToolCall",
        "id": item.id,
        "server": item.server,
        "tool": item.tool,
        "status": _STATUS[item.status],
        "arguments": item.arguments,
        "result": result,
        "error": {"message": item.error.message} if item.error is not None else None,
        "durationMs": extra.get("durationMs"),
    }


_COLLAB_TOOLS = {
    "spawn_agent": "spawnAgent",
    "send_input": "sendInput",
    "close_agent": "closeAgent",
}


def _camel(word: str) -> str:
    head, *rest = word.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _collab_item(item: CollabToolCallItem) -> JsonDict:
    return {
        "type": "collabAgentToolCall",
        "id": item.id,
        "tool": _COLLAB_TOOLS.get(item.tool, item.tool),
        "status": _STATUS[item.status],
        "senderThreadId": item.sender_thread_id,
        "receiverThreadIds": list(item.receiver_thread_ids),
        "prompt": item.prompt,
        "model": None,
        "reasoningEffort": None,
        "agentsStates": {
            key: {"status": _camel(state.status), "message": state.message}
            for key, state in item.agents_states.items()
        },
    }


def plan_item(item_id: str, item: TodoListItem) -> JsonDict:
    """The plan as a checklist (``- [x] step``), the text of a v2 ``plan`` item."""
    lines = [f"- [{'x' if entry.completed else ' '}] {entry.text}" for entry in item.items]
    return {"type": "plan", "id": item_id, "text": "\n".join(lines)}


def thread_item(
    item: ExecItem, *, item_id: str, cwd: str, extra: Mapping[str, Any] | None = None
) -> JsonDict | None:
    """The v2 item of one exec item (None for kinds v2 shows otherwise: warnings, todo lists)."""
    item = item.model_copy(update={"id": item_id})
    facts = extra or {}
    match item:
        case AgentMessageItem():
            return {"type": "agentMessage", "id": item.id, "text": item.text}
        case ReasoningItem():
            summary = [item.text] if item.text else []
            return {"type": "reasoning", "id": item.id, "summary": summary, "content": []}
        case CommandExecutionItem():
            return _command_item(item, cwd, facts)
        case FileChangeItem():
            return _file_change_item(item, facts)
        case McpToolCallItem():
            return _mcp_item(item, facts)
        case CollabToolCallItem():
            return _collab_item(item)
        case _:
            return None


def user_message_item(item_id: str, content: list[JsonDict]) -> JsonDict:
    return {"type": "userMessage", "id": item_id, "content": content}


def context_compaction_item(item_id: str) -> JsonDict:
    return {"type": "contextCompaction", "id": item_id}


def _breakdown(usage: Any) -> JsonDict:
    values = usage if isinstance(usage, dict) else {}

    def number(key: str) -> int:
        value = values.get(key)
        return value if isinstance(value, int) else 0

    return {
        "totalTokens": number("total_tokens"),
        "inputTokens": number("input_tokens"),
        "cachedInputTokens": number("cached_input_tokens"),
        "outputTokens": number("output_tokens"),
        "reasoningOutputTokens": number("reasoning_output_tokens"),
    }


def token_usage(info: Mapping[str, Any]) -> JsonDict:
    """``thread/tokenUsage/updated.tokenUsage`` from a ``token_count`` event's ``info``."""
    window = info.get("model_context_window")
    return {
        "total": _breakdown(info.get("total_token_usage")),
        "last": _breakdown(info.get("last_token_usage")),
        "modelContextWindow": window if isinstance(window, int) else None,
    }
