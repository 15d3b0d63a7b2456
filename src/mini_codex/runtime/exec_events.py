"""The one mapping from session events to Codex's ``exec --json`` events (``ExecEventMapper``).

``exec --json``, the SDK (``sdk/``) and the inspector all feed the same ``SessionEvent`` stream
through this class, so they print and return the same items. The rules follow Codex's
``event_processor_with_jsonl_output``:

* ``session_configured`` → ``thread.started {thread_id}``; ``task_started`` → ``turn.started``.
* Item ids are ``item_0``, ``item_1``, … in the order items first appear (per thread).
* An assistant message and a non-empty reasoning summary become one ``item.completed`` each.
* Shell calls (``shell``, ``shell_command``, ``exec_command``) → ``command_execution``;
  ``apply_patch`` → ``file_change`` (paths absolute, kinds from the parsed patch);
  ``mcp__SERVER__TOOL`` and the resource tools (server ``codex`` when no ``server`` was given, as
  Codex 0.169 reports them) → ``mcp_tool_call``: ``item.started`` when the call begins and
  ``item.completed`` when it ends; the sub-agent tools → ``collab_tool_call`` (``exec_collab``).
* ``update_plan`` → one ``todo_list`` item per turn: started by the first plan, updated by the next
  ones, completed when the turn ends.
* Warnings → ``item.completed`` of an ``error`` item; a turn error → top-level ``error`` and, at
  the end of the turn, ``turn.failed {error}`` instead of ``turn.completed {usage}``. An
  interrupted turn ends without a turn event (as in Codex).
* ``usage`` is the thread's total token usage (Codex reports the same).
* ``context_compacted`` has no exec event (as in Codex); the long-threads warning that follows it
  is an ``error`` item like every warning, and the summarizer's answer is no agent message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import msgspec
import orjson

from mini_codex import protocol
from mini_codex.mcp.resources import RESOURCE_TOOL_NAMES
from mini_codex.protocol import session_events
from mini_codex.protocol.exec_events import (
    AgentMessageItem,
    CollabToolCallItem,
    CommandExecutionItem,
    ErrorItem,
    ExecEvent,
    ExecItem,
    FileChange,
    FileChangeItem,
    ItemCompleted,
    ItemStarted,
    ItemUpdated,
    McpToolCallError,
    McpToolCallItem,
    McpToolCallResult,
    ReasoningItem,
    ThreadError,
    ThreadStarted,
    TodoEntry,
    TodoListItem,
    TurnCompleted,
    TurnError,
    TurnFailed,
    TurnStarted,
    Usage,
)
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.exec_collab import COLLAB_PREFIX, collab_completed, collab_started
from mini_codex.tools.apply_patch.parser import (
    AddFile,
    DeleteFile,
    PatchParseError,
    UpdateFile,
    parse_patch,
)

__all__ = ["SHELL_TOOLS", "ExecEventMapper"]

SHELL_TOOLS = frozenset({"shell", "shell_command", "exec_command", "local_shell"})
_MCP_PREFIX = "mcp__"


class _Running(msgspec.Struct):
    item: ExecItem


def _json_object(payload: str) -> dict[str, Any]:
    try:
        value = orjson.loads(payload) if payload.strip() else {}
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _reasoning_text(item: dict[str, Any]) -> str:
    parts = [p.get("text", "") for p in item.get("summary") or () if isinstance(p, dict)]
    return "\n".join(part for part in parts if isinstance(part, str))


def _message_text(item: dict[str, Any]) -> str:
    parts = [p.get("text", "") for p in item.get("content") or () if isinstance(p, dict)]
    return "".join(part for part in parts if isinstance(part, str))


def _patch_changes(payload: str, cwd: Path) -> tuple[FileChange, ...] | None:
    text = payload
    if payload.lstrip().startswith("{"):  # the function-tool form: {"input": "*** Begin Patch…"}
        value = _json_object(payload).get("input")
        text = value if isinstance(value, str) else ""
    try:
        patch = parse_patch(text)
    except PatchParseError:
        return None
    changes: list[FileChange] = []
    for hunk in patch.hunks:
        kind: Literal["add", "delete", "update"]
        match hunk:
            case AddFile():
                kind = "add"
            case DeleteFile():
                kind = "delete"
            case UpdateFile():
                kind = "update"
        changes.append(FileChange(path=str(cwd / hunk.path), kind=kind))
    return tuple(changes)


def _todo_entries(payload: str) -> tuple[TodoEntry, ...] | None:
    plan = _json_object(payload).get("plan")
    if not isinstance(plan, list):
        return None
    entries = []
    for step in plan:
        if isinstance(step, dict) and isinstance(step.get("step"), str):
            entries.append(
                TodoEntry(text=step["step"], completed=step.get("status") == "completed")
            )
    return tuple(entries)


def _split_mcp_name(name: str) -> tuple[str, str]:
    rest = name[len(_MCP_PREFIX) :]
    server, _, tool = rest.partition("__")
    return server, tool


class ExecEventMapper:
    """Feed every ``SessionEvent`` in order; each call returns the exec events it produces."""

    def __init__(self) -> None:
        self._next_id = 0
        self._cwd = Path("/")
        self._thread_id = ""
        self._running: dict[str, _Running] = {}
        self._todo: TodoListItem | None = None
        self._usage = Usage()
        self._turn_error: str | None = None
        self._turn_message: str | None = None
        self.final_message: str | None = None
        """The last agent message of the last completed turn (for ``-o`` and the SDK)."""
        self.failed: str | None = None
        """The error message of the last failed turn (None when it completed)."""

    def _new_id(self) -> str:
        item_id = f"item_{self._next_id}"
        self._next_id += 1
        return item_id

    def feed(self, event: SessionEvent) -> list[ExecEvent]:
        match event:
            case session_events.SessionConfigured():
                self._cwd, self._thread_id = Path(event.cwd), event.session_id
                return [ThreadStarted(thread_id=event.session_id)]
            case protocol.TaskStarted():
                self._turn_error = None
                self._todo = None
                self._turn_message = None
                return [TurnStarted()]
            case session_events.ItemCompleted():
                return self._response_item(event.item)
            case session_events.ToolCallBegin():
                return self._begin(event)
            case session_events.ToolCallEnd():
                return self._end(event)
            case protocol.TokenCount():
                self._count(event)
                return []
            case session_events.WarningEvent():
                return [ItemCompleted(item=ErrorItem(id=self._new_id(), message=event.message))]
            case session_events.ErrorEvent():
                self._turn_error = event.message
                return [ThreadError(message=event.message)]
            case protocol.TaskComplete():
                return self._turn_end()
            case protocol.TurnAborted():
                self._running.clear()
                self._todo = None
                return []
            case (
                protocol.UserMessageEvent()
                | protocol.AgentMessageEvent()
                | session_events.StepStarted()
                | session_events.AgentMessageDelta()
                | session_events.ReasoningDelta()
                | session_events.StreamErrorEvent()
                # live output is not part of Codex's exec JSONL
                | session_events.ExecCommandOutputDelta()
                | session_events.ShutdownComplete()
                # Codex's JSONL has no compaction item (its warning shows)
                | session_events.ContextCompacted()
            ):
                return []
            case _:
                return []

    # --- items -------------------------------------------------------------------------------

    def _response_item(self, item: dict[str, Any]) -> list[ExecEvent]:
        kind = item.get("type")
        if kind == "reasoning":
            text = _reasoning_text(item)
            if not text.strip():
                return []
            return [ItemCompleted(item=ReasoningItem(id=self._new_id(), text=text))]
        if kind == "message" and item.get("role") == "assistant":
            text = _message_text(item)
            self._turn_message = text
            return [ItemCompleted(item=AgentMessageItem(id=self._new_id(), text=text))]
        return []

    def _begin(self, event: session_events.ToolCallBegin) -> list[ExecEvent]:
        started: ExecItem
        if event.name in SHELL_TOOLS:
            args = _json_object(event.payload)
            command = args.get("command", args.get("cmd", ""))
            if isinstance(command, list):
                command = " ".join(str(part) for part in command)
            started = CommandExecutionItem(
                id=self._new_id(),
                command=str(command),
                aggregated_output="",
                exit_code=None,
                status="in_progress",
            )
        elif event.name == "apply_patch":
            changes = _patch_changes(event.payload, self._cwd)
            if changes is None:
                return []  # an unparsable patch changes nothing; the model is told why
            started = FileChangeItem(id=self._new_id(), changes=changes, status="in_progress")
        elif event.name in RESOURCE_TOOL_NAMES:  # as Codex: server "codex" for all servers
            arguments = _json_object(event.payload)
            server = arguments.get("server")
            started = McpToolCallItem(
                id=self._new_id(),
                server=server if isinstance(server, str) else "codex",
                tool=event.name,
                arguments=arguments,
                result=None,
                error=None,
                status="in_progress",
            )
        elif event.name.startswith(_MCP_PREFIX):
            server, tool = _split_mcp_name(event.name)
            started = McpToolCallItem(
                id=self._new_id(),
                server=server,
                tool=tool,
                arguments=_json_object(event.payload),
                result=None,
                error=None,
                status="in_progress",
            )
        elif event.name == "update_plan":
            return self._plan(event.payload)
        elif event.name.startswith(COLLAB_PREFIX):  # sub-agents: exec_collab.py
            collab = collab_started(event.name, event.payload, self._thread_id)
            if collab is not None:
                self._running[event.call_id] = _Running(collab)
            return []  # printed when the call ends (a begin is told before a serial call runs)
        else:
            return []
        self._running[event.call_id] = _Running(started)
        return [ItemStarted(item=started)]

    def _plan(self, payload: str) -> list[ExecEvent]:
        entries = _todo_entries(payload)
        if entries is None:
            return []
        if self._todo is None:
            self._todo = TodoListItem(id=self._new_id(), items=entries)
            return [ItemStarted(item=self._todo)]
        self._todo = self._todo.model_copy(update={"items": entries})
        return [ItemUpdated(item=self._todo)]

    def _end(self, event: session_events.ToolCallEnd) -> list[ExecEvent]:
        running = self._running.pop(event.call_id, None)
        if running is None:
            return []
        details = event.details or {}
        ok = event.success is not False
        completed: ExecItem
        match running.item:
            case CommandExecutionItem() as item:
                exit_code = details.get("exit_code")
                output = details.get("output")
                completed = item.model_copy(
                    update={
                        "aggregated_output": output if isinstance(output, str) else event.output,
                        "exit_code": exit_code if isinstance(exit_code, int) else None,
                        "status": "completed" if ok else "failed",
                    }
                )
            case FileChangeItem() as item:
                completed = item.model_copy(update={"status": "completed" if ok else "failed"})
            case McpToolCallItem() as item:
                completed = self._mcp_completed(item, details, event, ok)
            case CollabToolCallItem() as item:
                started = item.model_copy(update={"id": self._new_id()})
                return [ItemStarted(item=started), collab_completed(started, details, ok)]
            case _:
                return []
        return [ItemCompleted(item=completed)]

    @staticmethod
    def _mcp_completed(
        item: McpToolCallItem, details: dict[str, Any], event: session_events.ToolCallEnd, ok: bool
    ) -> McpToolCallItem:
        raw = details.get("result")
        update: dict[str, Any] = {}
        for key in ("server", "tool", "arguments"):
            if key in details:
                update[key] = details[key]
        if ok and isinstance(raw, dict):
            update["result"] = McpToolCallResult(
                content=tuple(raw.get("content") or ()),
                structured_content=raw.get("structured_content"),
            )
            update["status"] = "completed"
        else:
            update["error"] = McpToolCallError(message=event.output)
            update["status"] = "failed"
        return item.model_copy(update=update)

    # --- turn end ----------------------------------------------------------------------------

    def _count(self, event: protocol.TokenCount) -> None:
        total = (event.info or {}).get("total_token_usage")
        if isinstance(total, dict):
            fields = Usage.model_fields
            self._usage = Usage(
                **{k: int(v) for k, v in total.items() if k in fields and isinstance(v, int)}
            )

    def _turn_end(self) -> list[ExecEvent]:
        events: list[ExecEvent] = []
        if self._todo is not None:
            events.append(ItemCompleted(item=self._todo))
            self._todo = None
        self._running.clear()
        if self._turn_error is not None:
            self.failed = self._turn_error
            self.final_message = None
            events.append(TurnFailed(error=TurnError(message=self._turn_error)))
            return events
        self.failed = None
        self.final_message = self._turn_message
        events.append(TurnCompleted(usage=self._usage))
        return events
