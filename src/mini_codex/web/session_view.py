"""A decoded rollout (or a window of one) → turns, steps and items for the inspector (pure).

What belongs here: one forward pass over typed lines that groups them into turns and steps,
records each step's world-state change and the world state at its model request (the
baseline of :class:`~mini_codex.rollout.replay.forward.ForwardReplay`, the one set of replay
rules), its tool calls with their outputs, token usage and duration, plus the compactions,
checkpoints, rollbacks and replay warnings of the file. What does not: the data classes and
their JSON (``view_model.py``), reading files (``source.py``), the request a step sent
(``request.py``), HTTP (``app.py``).

Grouping (the same rules as ``rollout inspect``): ``task_started`` opens a turn and
``task_complete`` / ``turn_aborted`` closes it; files without task events are split at user
input. A step is one model request: the first model output of a turn opens step 1, model output
after a tool output or a ``world_state`` / ``turn_context`` line after model output opens the
next one. The step id is the byte offset of the line that opened the step (``"o<offset>"``), so
it stays the same while a live file grows and when the timeline is read in pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mini_codex.protocol import (
    CompactedLine,
    CustomToolCall,
    CustomToolCallOutput,
    EventMsgLine,
    FunctionCall,
    FunctionCallOutput,
    Message,
    Reasoning,
    ResponseItem,
    ResponseItemLine,
    RolloutLine,
    SessionMetaLine,
    TaskComplete,
    TaskStarted,
    ThreadRolledBack,
    TokenCount,
    TurnAborted,
    TurnContextLine,
    UserMessageEvent,
    WorldStateLine,
)
from mini_codex.rollout.replay.checkpoint import CHECKPOINT_KEY
from mini_codex.rollout.replay.entries import is_user_turn_boundary
from mini_codex.rollout.replay.forward import BaselineChange, ForwardReplay
from mini_codex.web.bounded import token_usage
from mini_codex.web.view_model import (
    LineRef,
    SessionView,
    StepView,
    TurnView,
    event_text,
    item_row,
    step_id_for,
)

__all__ = ["build_view"]

_MODEL_OUTPUT = (Reasoning, FunctionCall, CustomToolCall)
_SHOWN_EVENTS = frozenset(
    {"safety_decision", "exec_approval_request", "apply_patch_approval_request", "error"}
)
"""Events shown as items (the others mostly repeat items)."""


def build_view(
    lines: Sequence[RolloutLine],
    refs: Sequence[LineRef],
    *,
    continued: bool = False,
) -> SessionView:
    """Group decoded lines (each with its :class:`LineRef`) into turns and steps.

    ``continued``: the lines are a window from the middle of a file. When the window starts
    inside a turn (its first turn frame is an end), an unnamed turn is open from its first line,
    one that already made a model request (so the next ``world_state`` opens a step).
    """
    by_user_input = not any(
        isinstance(line, EventMsgLine) and isinstance(line.payload, TaskStarted) for line in lines
    )
    builder = _Builder(by_user_input)
    if continued and refs and _starts_inside_turn(lines):
        builder.open_turn(0, refs[0], None)
        builder.continued = True
    for index, (line, ref) in enumerate(zip(lines, refs, strict=True)):
        builder.feed(index, line, ref)
    builder.finish(len(lines))
    return builder.view


class _Builder:
    def __init__(self, by_user_input: bool) -> None:
        self.view = SessionView()
        self.by_user_input = by_user_input
        self.replay = ForwardReplay()
        self.turn: TurnView | None = None
        self.model: str | None = None
        self.calls: dict[str, dict[str, Any]] = {}
        self.last_step: StepView | None = None
        self.continued = False
        """The open turn began before the window (it already made a request)."""
        self.pending_changes: list[dict[str, Any]] = []
        """World-state changes since the last request (they belong to the next step)."""

    # --- turns and steps -------------------------------------------------------------------------

    def open_turn(self, index: int, ref: LineRef, turn_id: str | None) -> None:
        # ForwardReplay numbers records by position in the lines read (a window may have no
        # line numbers); rollbacks are reported with their own LineRef.
        segment = self.replay.open_segment(index + 1, turn_id)
        turn = TurnView(len(self.view.turns) + 1, turn_id, ref, segment=segment)
        self.view.turns.append(turn)
        self.turn = turn

    def end_turn(self) -> None:
        self.turn = None
        self.continued = False
        self.replay.close_segment()

    def new_step(self, index: int, ref: LineRef) -> StepView | None:
        turn = self.turn
        if turn is None:
            return None
        step = StepView(
            step_id_for(ref.offset),
            len(turn.steps) + 1,
            index,
            index,
            ref,
            turn.turn_id,
            self.model,
        )
        turn.steps.append(step)
        self.view.steps[step.step_id] = step
        return step

    def current_step(self) -> StepView | None:
        turn = self.turn
        return turn.steps[-1] if turn is not None and turn.steps else None

    def model_output(self, index: int, ref: LineRef) -> StepView | None:
        step = self.current_step()
        if step is None or step.after_tool_output:
            step = self.new_step(index, ref)
        if step is None:
            return None
        self.close_request(step, index)
        step.has_output = True
        step.after_tool_output = False
        return step

    def close_request(self, step: StepView | None, index: int = 0) -> None:
        """The step's model request was sent just before line ``index``."""
        if step is None or step.requested:
            return
        step.requested = True
        step.request_index = index
        step.model = self.model
        step.world_state = self.replay.baseline
        if self.last_step is not None:
            step.previous_world_state = self.last_step.world_state
        step.changes, self.pending_changes = self.pending_changes, []
        self.last_step = step

    def before_request(self, index: int, ref: LineRef) -> None:
        step = self.current_step()
        if (step is not None and step.has_output) or (step is None and self.continued):
            self.new_step(index, ref)

    def place(self, row: dict[str, Any]) -> None:
        step = self.current_step()
        if step is not None:
            step.items.append(row)
        elif self.turn is not None:
            self.turn.items.append(row)

    # --- lines -----------------------------------------------------------------------------------

    def feed(self, index: int, line: RolloutLine, ref: LineRef) -> None:
        step = self.current_step()
        if step is not None and line.timestamp is not None:
            step.ended = line.timestamp
        match line:
            case SessionMetaLine():
                if self.view.meta is None:
                    self.view.meta = line.payload.to_json()
            case ResponseItemLine():
                self.item(index, line.payload, ref, line.timestamp)
            case TurnContextLine():
                self.before_request(index, ref)
                self.model = line.payload.model or self.model
                self.place({"line": ref.line, "kind": "turn_context", "model": self.model})
            case WorldStateLine():
                self.before_request(index, ref)
                change = self.replay.world_state(index + 1, line.payload.full, line.payload.state)
                self.world_state_change(change, ref)
            case CompactedLine():
                self.compacted(index, line, ref)
            case EventMsgLine():
                if isinstance(line.payload, TaskStarted | TaskComplete | TurnAborted):
                    # A step that never got model output: its request ended with the turn.
                    self.close_request(self.current_step(), index)
                self.event(index, line, ref)
            case _:
                pass

    def item(self, index: int, item: ResponseItem, ref: LineRef, timestamp: str | None) -> None:
        boundary = is_user_turn_boundary(item)
        if boundary and self.by_user_input:
            turn = self.turn
            if turn is None or any(step.has_output for step in turn.steps):
                self.close_request(self.current_step(), index)
                self.open_turn(index, ref, None)
        if boundary:
            self.replay.user_input()
        row = item_row(item, ref)
        if isinstance(item, Message) and item.role != "assistant" and not boundary:
            # A world-state message after model output is written for the next request.
            self.before_request(index, ref)
        if isinstance(item, _MODEL_OUTPUT) or (
            isinstance(item, Message) and item.role == "assistant"
        ):
            step = self.model_output(index, ref)
            if step is not None and step.started is None:
                step.started = timestamp
                step.ended = timestamp
        self.place(row)
        step = self.current_step()
        if isinstance(item, FunctionCall | CustomToolCall):
            call = {
                "call_id": item.call_id,
                "name": item.name,
                "line": ref.line,
                "offset": ref.offset,
                "arguments": item.arguments if isinstance(item, FunctionCall) else item.input,
                "output": None,
            }
            self.calls[item.call_id] = call
            if step is not None:
                step.tool_calls.append(call)
        elif isinstance(item, FunctionCallOutput | CustomToolCallOutput):
            found = self.calls.get(item.call_id)
            if found is not None:
                found["output"] = row.get("text", "")
                found["output_line"] = ref.line
                found["output_offset"] = ref.offset
            if step is not None:
                step.after_tool_output = True

    def event(self, index: int, line: EventMsgLine, ref: LineRef) -> None:
        event = line.payload
        match event:
            case TaskStarted():
                self.open_turn(index, ref, event.turn_id)
            case TaskComplete() | TurnAborted():
                if self.turn is not None:
                    self.turn.status = "aborted" if isinstance(event, TurnAborted) else "complete"
                self.end_turn()
            case ThreadRolledBack():
                self.end_turn()
                segments = self.replay.roll_back(index + 1, event.num_turns)
                dropped = [turn for turn in self.view.turns if turn.segment in segments]
                for gone in dropped:
                    gone.rolled_back_by = ref
                self.view.rollbacks.append(
                    {
                        "line": ref.line,
                        "offset": ref.offset,
                        "num_turns": event.num_turns,
                        "turns": [gone.number for gone in dropped],
                    }
                )
            case TokenCount():
                info = event.info if isinstance(event.info, dict) else {}
                last = token_usage(info.get("last_token_usage"))
                if last is not None and self.last_step is not None:
                    self.last_step.token_usage = last
            case UserMessageEvent():
                if self.by_user_input:
                    turn = self.turn
                    if turn is None or any(step.has_output for step in turn.steps):
                        self.open_turn(index, ref, None)
                self.replay.user_input()
            case _:
                if event.type in _SHOWN_EVENTS:
                    row = {"line": ref.line, "kind": "event", "type": event.type}
                    self.place({**row, "text": event_text(event)})

    def world_state_change(self, change: BaselineChange, ref: LineRef) -> None:
        record: dict[str, Any] = {
            "line": ref.line,
            "cause": change.cause,
            "sections": sorted(change.patch or change.after or {}),
        }
        if change.cause == "ignored_patch":
            self.view.warnings.append(
                f"line {ref.line}: world_state patch without a full snapshot (ignored on replay)"
            )
        self.pending_changes.append(record)
        self.place({"line": ref.line, "kind": "world_state", **record})

    def compacted(self, index: int, line: CompactedLine, ref: LineRef) -> None:
        payload = line.payload
        self.replay.compacted(index + 1)
        self.pending_changes.append({"line": ref.line, "cause": "compacted", "sections": []})
        history = payload.replacement_history
        extra = payload.model_extra or {}
        record = {
            "line": ref.line,
            "offset": ref.offset,
            "history_items": len(history) if history is not None else None,
            "summary": payload.message,
        }
        if CHECKPOINT_KEY in extra:
            self.view.checkpoints.append(record)
            kind = "checkpoint"
        else:
            self.view.compactions.append({**record, "step_index": len(self.view.steps)})
            kind = "compacted"
        self.place({"line": ref.line, "kind": kind, "text": payload.message})

    def finish(self, end: int) -> None:
        step = self.current_step()
        if step is not None and not step.requested:
            self.close_request(step, end)
        for turn in self.view.turns:
            for each in turn.steps:
                if not each.requested:
                    self.close_request(each, end)


def _starts_inside_turn(lines: Sequence[RolloutLine]) -> bool:
    for line in lines:
        if isinstance(line, EventMsgLine):
            if isinstance(line.payload, TaskStarted):
                return False
            if isinstance(line.payload, TaskComplete | TurnAborted):
                return True
    return False
