"""Session events → v2 notifications of one thread (``ThreadNotifier``).

What an event *means* is decided once, by ``ExecEventMapper`` (``runtime/exec_events.py``, the
mapping ``exec --json`` and the SDK use); this class adds what the v2 protocol streams on top:

* ``item/started`` / ``item/completed`` for every item (tool items carry their call id);
  agent messages and reasoning open with their first delta (``item/agentMessage/delta``,
  ``item/reasoning/summaryTextDelta``) and close when the response item is recorded;
* ``item/commandExecution/outputDelta`` from the live output chunks (decoded incrementally);
* a command the user declined completes with status ``declined``;
* ``turn/plan/updated`` for each ``update_plan`` (and a ``plan`` item holding the checklist);
* ``turn/diff/updated`` after each file change (``diffs.TurnDiffs``);
* ``thread/tokenUsage/updated``, ``warning``, ``error`` (``willRetry`` for a retried stream),
  ``contextCompaction`` items and ``thread/compacted``.

Every notification carries the thread id (and the turn id of the running turn), so notifications
of different threads never mix. ``turn_error`` / ``aborted`` tell the thread how the turn ended.
"""

from __future__ import annotations

import codecs
import time
import uuid
from collections.abc import Callable
from typing import Any

import orjson

from mini_codex.app_server.diffs import TurnDiffs
from mini_codex.app_server.items import (
    context_compaction_item,
    plan_item,
    thread_item,
    token_usage,
)
from mini_codex.protocol import TaskStarted, TokenCount, TurnAborted
from mini_codex.protocol.approvals import SafetyDecision
from mini_codex.protocol.exec_events import (
    ExecEvent,
    FileChangeItem,
    ItemCompleted,
    ItemStarted,
    ItemUpdated,
    TodoListItem,
)
from mini_codex.protocol.session_events import (
    AgentMessageDelta,
    ContextCompacted,
    ErrorEvent,
    ExecCommandOutputDelta,
    ReasoningDelta,
    SessionConfigured,
    SessionEvent,
    StreamErrorEvent,
    ToolCallBegin,
    ToolCallEnd,
    WarningEvent,
)
from mini_codex.protocol.session_events import ItemCompleted as RecordedItem
from mini_codex.runtime.exec_events import ExecEventMapper

__all__ = ["Emit", "ThreadNotifier"]

JsonDict = dict[str, Any]
Emit = Callable[[str, JsonDict], None]
_PLAN_STATUS = {"pending": "pending", "in_progress": "inProgress", "completed": "completed"}


def _now_ms() -> int:
    return int(time.time() * 1000)


class ThreadNotifier:
    def __init__(self, emit: Emit, cwd: str, *, now_ms: Callable[[], int] = _now_ms) -> None:
        self._emit = emit
        self._now = now_ms
        self.cwd = cwd
        self.thread_id = ""
        self.turn_id = ""
        self._mapper = ExecEventMapper()
        self._message: str | None = None
        self._reasoning: str | None = None
        self._call_for: dict[str, str] = {}
        """Exec item id (``item_N``) → call id."""
        self._started: dict[str, float] = {}
        self._declined: set[str] = set()
        self._decoders: dict[str, codecs.IncrementalDecoder] = {}
        self._plan_id: str | None = None
        self._diffs = TurnDiffs()
        self.turn_error: str | None = None
        self.aborted = False
        self.completed_items: list[JsonDict] = []
        """The turn's completed items (the ``turn/completed`` turn shows its agent messages)."""

    # --- turn boundaries -------------------------------------------------------------------------

    def begin_turn(self, turn_id: str) -> None:
        self.turn_id = turn_id
        self.turn_error = None
        self.aborted = False
        self.completed_items = []
        self._message = self._reasoning = self._plan_id = None
        self._diffs.reset()

    def notify(self, method: str, params: JsonDict) -> None:
        self._emit(method, params)

    def _scoped(self, **fields: Any) -> JsonDict:
        return {"threadId": self.thread_id, "turnId": self.turn_id, **fields}

    def item_started(self, item: JsonDict) -> None:
        now = self._now()
        self._emit("item/started", self._scoped(item=item, startedAtMs=now))

    def item_completed(self, item: JsonDict) -> None:
        self.completed_items.append(item)
        self._emit("item/completed", self._scoped(item=item, completedAtMs=self._now()))

    # --- events ----------------------------------------------------------------------------------

    def feed(self, event: SessionEvent) -> None:
        match event:
            case SessionConfigured():
                self.thread_id = event.session_id
                self.cwd = event.cwd
            case AgentMessageDelta():
                self._delta_message(event.delta)
                return
            case ReasoningDelta():
                self._delta_reasoning(event.delta)
                return
            case ExecCommandOutputDelta():
                self._output_delta(event)
                return
            case ToolCallBegin():
                self._begin(event)
                return
            case ToolCallEnd():
                self._end(event)
                return
            case RecordedItem():
                self._recorded(event)
                return
            case TokenCount() if event.info:
                usage = token_usage(event.info)
                self._emit("thread/tokenUsage/updated", self._scoped(tokenUsage=usage))
            case WarningEvent():
                self._emit("warning", {"threadId": self.thread_id, "message": event.message})
            case ErrorEvent():
                self.turn_error = event.message
                error = {"message": event.message}
                self._emit("error", self._scoped(error=error, willRetry=False))
            case StreamErrorEvent():
                error = {"message": event.message}
                self._emit("error", self._scoped(error=error, willRetry=True))
            case ContextCompacted():
                item = context_compaction_item(f"compaction-{uuid.uuid4()}")
                self.item_started(item)
                self.item_completed(item)
                self._emit("thread/compacted", self._scoped())
            case SafetyDecision() if event.source == "user" and event.decision in (
                "denied",
                "abort",
            ):
                self._declined.add(event.call_id)
            case TurnAborted():
                self.aborted = True
            case TaskStarted():
                pass
            case _:
                pass
        self._mapped(self._mapper.feed(event))

    def _mapped(self, events: list[ExecEvent]) -> None:
        for exec_event in events:
            if isinstance(exec_event, ItemCompleted) and isinstance(exec_event.item, TodoListItem):
                if self._plan_id is not None:
                    self.item_completed(plan_item(self._plan_id, exec_event.item))
                    self._plan_id = None

    # --- streamed items --------------------------------------------------------------------------

    def _delta_message(self, delta: str) -> None:
        if self._message is None:
            self._message = f"msg-{uuid.uuid4()}"
            self.item_started({"type": "agentMessage", "id": self._message, "text": ""})
        params = self._scoped(itemId=self._message, delta=delta)
        self._emit("item/agentMessage/delta", params)

    def _delta_reasoning(self, delta: str) -> None:
        if self._reasoning is None:
            self._reasoning = f"rs-{uuid.uuid4()}"
            item = {"type": "reasoning", "id": self._reasoning, "summary": [], "content": []}
            self.item_started(item)
        params = self._scoped(itemId=self._reasoning, delta=delta, summaryIndex=0)
        self._emit("item/reasoning/summaryTextDelta", params)

    def _recorded(self, event: RecordedItem) -> None:
        kind, role = event.item.get("type"), event.item.get("role")
        mapped = self._mapper.feed(event)
        if kind == "message" and role == "assistant":
            item_id, self._message = self._message, None
            self._close(mapped, item_id, started=item_id is not None)
        elif kind == "reasoning":
            item_id, self._reasoning = self._reasoning, None
            if not mapped and item_id is not None:  # streamed, but an empty summary in the end
                self.item_completed(
                    {"type": "reasoning", "id": item_id, "summary": [], "content": []}
                )
            self._close(mapped, item_id, started=item_id is not None)

    def _close(self, mapped: list[ExecEvent], item_id: str | None, *, started: bool) -> None:
        for exec_event in mapped:
            if not isinstance(exec_event, ItemCompleted):
                continue
            final_id = item_id or f"item-{uuid.uuid4()}"
            item = thread_item(exec_event.item, item_id=final_id, cwd=self.cwd)
            if item is None:
                continue
            if not started:
                empty = {**item, "text": ""} if item["type"] == "agentMessage" else item
                self.item_started(empty)
            self.item_completed(item)

    # --- tool items ------------------------------------------------------------------------------

    def _begin(self, event: ToolCallBegin) -> None:
        mapped = self._mapper.feed(event)
        for exec_event in mapped:
            if not isinstance(exec_event, ItemStarted | ItemUpdated):
                continue
            item = exec_event.item
            if isinstance(item, TodoListItem):
                self._plan(event.payload, item)
                continue
            self._call_for[item.id] = event.call_id
            self._started[event.call_id] = time.monotonic()
            if isinstance(item, FileChangeItem):
                self._diffs.before(change.path for change in item.changes)
            v2 = thread_item(item, item_id=event.call_id, cwd=self.cwd)
            if v2 is not None:
                self.item_started(v2)

    def _plan(self, payload: str, item: TodoListItem) -> None:
        try:
            args = orjson.loads(payload)
        except orjson.JSONDecodeError:
            args = {}
        steps = args.get("plan") if isinstance(args, dict) else None
        plan = [
            {"step": step["step"], "status": _PLAN_STATUS.get(str(step.get("status")), "pending")}
            for step in steps or ()
            if isinstance(step, dict) and isinstance(step.get("step"), str)
        ]
        explanation = args.get("explanation") if isinstance(args, dict) else None
        if self._plan_id is None:
            self._plan_id = f"plan-{self.turn_id}"
            self.item_started(plan_item(self._plan_id, item))
        params = self._scoped(
            explanation=explanation if isinstance(explanation, str) else None, plan=plan
        )
        self._emit("turn/plan/updated", params)

    def _end(self, event: ToolCallEnd) -> None:
        mapped = self._mapper.feed(event)
        for exec_event in mapped:
            if isinstance(exec_event, ItemStarted):  # a sub-agent call starts as it ends
                started_item = thread_item(exec_event.item, item_id=event.call_id, cwd=self.cwd)
                if started_item is not None:
                    self.item_started(started_item)
                continue
            if not isinstance(exec_event, ItemCompleted):
                continue
            item = exec_event.item
            call_id = self._call_for.pop(item.id, event.call_id)
            started = self._started.pop(call_id, None)
            extra: JsonDict = {}
            if started is not None:
                extra["durationMs"] = int((time.monotonic() - started) * 1000)
            if call_id in self._declined:
                self._declined.discard(call_id)
                extra["status"] = "declined"
            self._decoders.pop(call_id, None)
            if isinstance(item, FileChangeItem):
                extra["diffs"] = self._diffs.after(change.path for change in item.changes)
            v2 = thread_item(item, item_id=call_id, cwd=self.cwd, extra=extra)
            if v2 is not None:
                self.item_completed(v2)
            if isinstance(item, FileChangeItem):
                self._emit("turn/diff/updated", self._scoped(diff=self._diffs.turn_diff()))

    def _output_delta(self, event: ExecCommandOutputDelta) -> None:
        decoder = self._decoders.get(event.call_id)
        if decoder is None:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            self._decoders[event.call_id] = decoder
        text = decoder.decode(event.data())
        if text:
            params = self._scoped(itemId=event.call_id, delta=text)
            self._emit("item/commandExecution/outputDelta", params)
