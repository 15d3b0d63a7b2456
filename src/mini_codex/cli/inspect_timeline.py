"""The ``rollout inspect`` timeline: decoded rollout lines → turns, steps and one-line rows (pure).

What belongs here: grouping a read rollout into turns and steps, the one-line preview of every
line, and the world-state diffs (the baseline replayed as in spec §6.3). What does not: reading
files (``mini_codex.rollout.reader``), colours and layout (``inspect_render.py``).

Grouping rules:

* **Turns.** A ``task_started`` (or ``turn_started``) event opens a turn; ``task_complete`` /
  ``turn_aborted`` closes it. Files without any task event (Codex 2025) are split by user input:
  a user-turn boundary item or a ``user_message`` event opens a turn unless the open turn has
  had no model output yet. Lines outside any turn are shown between turns.
* **Steps.** A step is one model request and what it produced. Inside a turn, the first model
  output (reasoning, assistant message, tool call, an unmodelled item type) opens step 1; a
  ``world_state`` or ``turn_context`` line after model output opens the next step (it is
  recorded before the next request), and so does model output after a tool output. Lines before
  the first step (the turn's user input and context update) belong to the turn itself.
* **Rollbacks.** ``thread_rolled_back(n)`` closes an open turn and marks turns newest first as
  rolled back until ``n`` user turns are marked (turns without user input are marked without
  using up the count, as replay does). World-state records of marked turns stop counting for
  later diffs.
* **World state.** Replayed by ``rollout.replay.forward.ForwardReplay`` (which also keeps the
  turn segments and applies rollbacks): ``compacted`` clears the baseline, a full
  ``world_state`` sets it, a patch applies to it. Every patch (and every full snapshot that
  replaces an existing baseline) lists the sections it changes and, for small changes, each
  changed key with its old and new value. A patch without a baseline is flagged (replay ignores
  it).
* **Events.** Only the turn frame (``task_started``, ``task_complete``, ``turn_aborted``),
  ``thread_rolled_back`` and the safety events (``safety_decision``, ``exec_approval_request``,
  ``apply_patch_approval_request``) are rows by default; other events (``user_message``,
  ``token_count``, … mostly repeat items) are counted per turn, or shown as rows with
  ``show_events``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mini_codex import protocol
from mini_codex.cli.inspect_preview import (
    RowKind,
    context_changes,
    context_summary,
    diff_lines,
    event_text,
    item_preview,
    preview,
)
from mini_codex.cli.inspect_rows import Row, Step, Timeline, TimelineTurn
from mini_codex.context.compaction import strip_summary_prefix
from mini_codex.jsonmerge import JsonObject, create_merge_patch
from mini_codex.protocol import ResponseItem, RolloutLine, TurnContextItem
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)
from mini_codex.rollout.replay.checkpoint import CHECKPOINT_KEY
from mini_codex.rollout.replay.entries import is_user_turn_boundary
from mini_codex.rollout.replay.forward import ForwardReplay
from mini_codex.rollout.replay.lines import ReadStats

__all__ = ["Row", "RowKind", "Step", "Timeline", "TimelineTurn", "build_timeline"]


def build_timeline(
    lines: Sequence[RolloutLine],
    line_numbers: Sequence[int],
    stats: ReadStats,
    *,
    warnings: Sequence[str] = (),
    show_events: bool = False,
) -> Timeline:
    """Group decoded lines (with their 1-based file line numbers) into a timeline."""
    if len(lines) != len(line_numbers):
        raise ValueError("line_numbers must have one entry per line")
    meta = next(
        (line.payload for line in lines if isinstance(line, protocol.SessionMetaLine)), None
    )
    by_user_input = not any(
        isinstance(line, protocol.EventMsgLine) and isinstance(line.payload, protocol.TaskStarted)
        for line in lines
    )
    builder = _Builder(Timeline(meta, stats, warnings=list(warnings)), by_user_input, show_events)
    builder.timeline.by_user_input = by_user_input
    for line, number in zip(lines, line_numbers, strict=True):
        builder.feed(line, number)
    return builder.timeline


class _Builder:
    def __init__(self, timeline: Timeline, by_user_input: bool, show_events: bool) -> None:
        self.timeline = timeline
        self.by_user_input = by_user_input
        self.show_events = show_events
        self.turn: TimelineTurn | None = None
        self.turn_count = 0
        self.replay = ForwardReplay()
        self.previous_context: TurnContextItem | None = None
        self.seen_meta = False

    # --- placement -------------------------------------------------------------------------------

    def add(self, row: Row) -> None:
        turn = self.turn
        if turn is None:
            self.timeline.blocks.append(row)
        elif turn.steps:
            turn.steps[-1].rows.append(row)
        else:
            turn.rows.append(row)

    def open_turn(self, number: int, turn_id: str | None, opened_by: Any) -> TimelineTurn:
        self.turn_count += 1
        segment = self.replay.open_segment(number, turn_id)
        turn = TimelineTurn(self.turn_count, number, turn_id, opened_by, segment=segment)
        self.timeline.blocks.append(turn)
        self.turn = turn
        return turn

    def new_step(self, number: int) -> None:
        turn = self.turn
        if turn is None:
            return
        turn.steps.append(Step(len(turn.steps) + 1, number))

    def model_output(self, number: int) -> None:
        turn = self.turn
        if turn is None:
            return
        step = turn.steps[-1] if turn.steps else None
        if step is None or step.after_tool_output:
            self.new_step(number)
            step = turn.steps[-1]
        step.has_output = True
        step.after_tool_output = False

    def before_request(self, number: int) -> None:
        """A world_state / turn_context line: after model output it opens the next step."""
        turn = self.turn
        if turn is not None and turn.steps and turn.steps[-1].has_output:
            self.new_step(number)

    def hide_event(self) -> None:
        if self.turn is not None:
            self.turn.hidden_events += 1
        else:
            self.timeline.hidden_events += 1

    # --- lines -----------------------------------------------------------------------------------

    def feed(self, line: RolloutLine, number: int) -> None:
        match line:
            case protocol.SessionMetaLine():
                if self.seen_meta:
                    self.add(Row(number, "meta", "session_meta", f"copied: id {line.payload.id}"))
                self.seen_meta = True
            case protocol.ResponseItemLine():
                self.item(line.payload, number)
            case protocol.TurnContextLine():
                self.before_request(number)
                self.add(Row(number, "turn_context", "turn_context", self.context_text(line)))
            case protocol.WorldStateLine():
                self.before_request(number)
                self.world_state(line.payload.full, line.payload.state, number)
            case protocol.CompactedLine():
                self.compacted(line, number)
            case protocol.EventMsgLine():
                self.event(line, number)
            case protocol.UnknownLine():
                text = "not modelled; ignored by replay"
                if line.type == "inter_agent_communication":
                    text = "inter-agent message (a user-turn boundary)"
                self.add(Row(number, "unknown", line.type, text))
            case _:
                self.add(Row(number, "unknown", getattr(line, "type", "?")))

    def item(self, item: ResponseItem, number: int) -> None:
        boundary = is_user_turn_boundary(item)
        if boundary and self.by_user_input:
            self.user_input(number)
        if boundary:
            self.user_input_seen()
        kind, label, text = item_preview(item)
        row = Row(number, kind, label, text)
        if row.kind in ("reasoning", "assistant", "call", "item"):
            self.model_output(number)
        self.add(row)
        if row.kind == "output" and self.turn is not None and self.turn.steps:
            self.turn.steps[-1].after_tool_output = True

    def user_input(self, number: int) -> None:
        turn = self.turn
        if turn is None or turn.has_output:
            self.open_turn(number, None, "user input")

    def event(self, line: protocol.EventMsgLine, number: int) -> None:
        event = line.payload
        match event:
            case protocol.TaskStarted():
                self.open_turn(number, event.turn_id, "task_started")
            case protocol.TaskComplete() | protocol.TurnAborted():
                self.close_turn(event, number)
            case protocol.ThreadRolledBack():
                self.end_turn()
                marked = self.roll_back(event.num_turns, number)
                text = f"{event.num_turns} user turn(s) dropped"
                if marked:
                    numbers = ", ".join(str(turn.number) for turn in marked)
                    text += f": turn{'s' if len(marked) != 1 else ''} {numbers}"
                self.add(Row(number, "rollback", "thread_rolled_back", text))
            case SafetyDecision() | ExecApprovalRequest() | ApplyPatchApprovalRequest():
                # Safety decisions are always rows: why a command ran, was asked or refused.
                self.add(Row(number, "event", event.type, event_text(event)))
            case _:
                if isinstance(event, protocol.UserMessageEvent):
                    if self.by_user_input:
                        self.user_input(number)
                    self.user_input_seen()
                if self.show_events:
                    self.add(Row(number, "event", event.type, event_text(event)))
                else:
                    self.hide_event()

    def close_turn(self, event: protocol.TaskComplete | protocol.TurnAborted, number: int) -> None:
        aborted = isinstance(event, protocol.TurnAborted)
        text = ""
        if isinstance(event, protocol.TurnAborted) and event.reason:
            text = event.reason
        elif isinstance(event, protocol.TaskComplete) and event.last_agent_message:
            text = preview(event.last_agent_message)
        row = Row(number, "event", event.type, text)
        turn = self.turn
        if turn is None or (
            event.turn_id is not None and turn.turn_id is not None and event.turn_id != turn.turn_id
        ):
            self.timeline.blocks.append(row)
            return
        turn.end = row
        turn.status = "aborted" if aborted else "complete"
        self.end_turn()

    def user_input_seen(self) -> None:
        self.replay.user_input()
        if self.turn is not None:
            self.turn.user_turn = True

    def end_turn(self) -> None:
        self.turn = None
        self.replay.close_segment()

    def roll_back(self, count: int, number: int) -> list[TimelineTurn]:
        segments = self.replay.roll_back(number, count)
        marked = [turn for turn in self.timeline.turns if turn.segment in segments]
        for turn in marked:
            turn.rolled_back_at = number
        return marked

    # --- context and world state -----------------------------------------------------------------

    def context_text(self, line: protocol.TurnContextLine) -> str:
        context = line.payload
        previous, self.previous_context = self.previous_context, context
        if previous is None:
            return context_summary(context)
        return context_changes(previous, context)

    def world_state(self, full: bool, state: JsonObject, number: int) -> None:
        change = self.replay.world_state(number, full, state)
        before = change.before
        if full:
            sections = ", ".join(state) or "no sections"
            text = f"full snapshot: {sections}"
            details: tuple[str, ...] = ()
            if before is not None:
                try:
                    patch = create_merge_patch(before, state)
                except ValueError:
                    patch = None
                changed = diff_lines(before, patch, state) if isinstance(patch, dict) else []
                details = (
                    "replaces the baseline; " + ("unchanged" if not changed else "changes:"),
                    *changed,
                )
            self.add(Row(number, "world_state", "world_state", text, details))
            return
        sections = ", ".join(state) or "nothing"
        if before is None:  # replay ignores it (change.cause == "ignored_patch")
            self.timeline.warnings.append(
                f"line {number}: world_state patch without a full snapshot (ignored on replay)"
            )
            self.add(
                Row(
                    number,
                    "world_state",
                    "world_state",
                    f"patch: {sections}",
                    ("no baseline: replay ignores this patch",),
                    flagged=True,
                )
            )
            return
        details = tuple(diff_lines(before, state, change.after))
        self.add(Row(number, "world_state", "world_state", f"patch: {sections}", details))

    def compacted(self, line: protocol.CompactedLine, number: int) -> None:
        payload = line.payload
        self.replay.compacted(number)
        history = payload.replacement_history
        extra = payload.model_extra or {}
        if CHECKPOINT_KEY in extra:
            count = len(history) if history is not None else 0
            text = f"history {count} items; resume starts here"
            self.add(Row(number, "checkpoint", "checkpoint", text))
            return
        summary = strip_summary_prefix(payload.message)
        parts = [f"summary: {preview(summary)}" if summary else "no summary"]
        if history is None:
            parts.append("legacy (no replacement history)")
        else:
            parts.append(f"replacement history {len(history)} items")
        window = payload.window_number
        if window is None and isinstance(payload.window_id, int):
            window = payload.window_id
        if window is not None:
            parts.append(f"window {window}")
        self.add(Row(number, "compaction", "compacted", " · ".join(parts)))
