"""Replay in file order, with an observer: per-line baseline, turn segments, rollbacks (PURE).

What belongs here: :class:`ForwardReplay`, the spec §6 rules run forwards over a rollout for the
readers that walk a file line by line (``verify``, ``rollout inspect``, and later compaction and
the web inspector): turn segments and which of them a rollback discards (the rule of
:class:`~mini_codex.rollout.replay.baseline.PendingRollback`), and the world-state baseline after
every line (the rules of :class:`~mini_codex.rollout.replay.baseline.Baseline`), where records of
a rolled-back segment never apply: a rollback re-replays the baseline from the records that
survive. Every change is reported to a :class:`ReplayObserver`. What does not: *when* a segment
opens (the caller decides: ``verify`` at ``task_started``; ``rollout inspect`` also at user
input in files without task events) and what a reader makes of a change (findings, diffs); the
reverse scan that reconstructs a session (``fold.py``), which applies the same two rule objects.

Usage::

    replay = ForwardReplay(observer)
    replay.open_segment(line, turn_id)          # a turn starts (task_started, ...)
    replay.user_input()                         # the open segment holds user input
    replay.world_state(line, full, state)       # -> BaselineChange
    replay.compacted(line)                      # -> BaselineChange
    replay.roll_back(line, num_turns)           # -> the segments discarded, oldest first
    replay.close_segment()                      # the turn ended
    replay.baseline                             # the world-state baseline now

A record fed while no segment is open belongs to none and is never discarded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from mini_codex.jsonmerge import JsonObject
from mini_codex.rollout.replay.baseline import Baseline, PendingRollback

__all__ = ["BaselineChange", "ChangeCause", "ForwardReplay", "ReplayObserver", "TurnSegment"]

ChangeCause: TypeAlias = Literal["full", "patch", "ignored_patch", "compacted", "rollback"]
"""Why the baseline changed: a full ``world_state``, a patch applied, a patch ignored for want
of a baseline (the replay warning of spec §6.3), a ``compacted`` reset, or a rollback that
re-replayed the surviving records."""


@dataclass(frozen=True)
class _Record:
    line: int
    full: bool | None
    """None for a compaction."""
    state: JsonObject


@dataclass(eq=False)
class TurnSegment:
    """One turn segment, in file order (spec §6.1)."""

    line: int
    """The 1-based line that opened it."""
    turn_id: str | None = None
    user_turn: bool = False
    """It holds user input (a ``user_message`` event or a user-turn boundary item)."""
    rolled_back_at: int | None = None
    """The line of the rollback marker that discards it."""

    @property
    def rolled_back(self) -> bool:
        return self.rolled_back_at is not None


@dataclass(frozen=True)
class BaselineChange:
    """What one line (or one rollback) did to the world-state baseline."""

    line: int
    cause: ChangeCause
    before: JsonObject | None
    after: JsonObject | None
    """The baseline after the line (``before`` again for an ignored patch). Never changed later:
    a reader may keep it (per-step world state)."""
    segment: TurnSegment | None
    """The segment the record belongs to (None: outside any segment, or a rollback)."""
    patch: JsonObject | None = None
    """The merge patch (causes ``patch`` and ``ignored_patch``)."""


class ReplayObserver:
    """Told every change a :class:`ForwardReplay` makes; override what you need."""

    def baseline_changed(self, change: BaselineChange) -> None:
        """After every ``world_state`` or ``compacted`` line, and after a rollback that changed
        which records survive."""

    def rolled_back(self, line: int, segments: Sequence[TurnSegment]) -> None:
        """A rollback marker at ``line`` discarded ``segments`` (oldest first)."""


_SILENT = ReplayObserver()


class ForwardReplay:
    """The world-state baseline and the turn segments of a rollout, fed in file order."""

    def __init__(self, observer: ReplayObserver | None = None) -> None:
        self.observer = observer if observer is not None else _SILENT
        self.segments: list[TurnSegment] = []
        self.current: TurnSegment | None = None
        self._records: list[tuple[TurnSegment | None, _Record]] = []
        self._baseline = Baseline()

    @property
    def baseline(self) -> JsonObject | None:
        """The world-state baseline after the lines fed so far (never changed later)."""
        return self._baseline.state

    # --- segments ---------------------------------------------------------------------------------

    def open_segment(self, line: int, turn_id: str | None = None) -> TurnSegment:
        segment = TurnSegment(line, turn_id)
        self.segments.append(segment)
        self.current = segment
        return segment

    def close_segment(self) -> None:
        self.current = None

    def user_input(self) -> None:
        """The open segment (if any) counts as a user turn."""
        if self.current is not None:
            self.current.user_turn = True

    def roll_back(self, line: int, turns: int) -> list[TurnSegment]:
        """A ``thread_rolled_back(turns)`` marker: discard segments newest first (the open one
        included) until ``turns`` user turns are gone; the baseline is replayed again from the
        records that survive. Returns the discarded segments, oldest first."""
        pending = PendingRollback(turns)
        marked: list[TurnSegment] = []
        for segment in reversed(self.segments):
            if segment.rolled_back:
                continue
            if not pending.discards(segment.user_turn):
                break
            segment.rolled_back_at = line
            marked.append(segment)
        marked.reverse()
        if marked:
            before = self.baseline
            self._baseline = self._replay_surviving()
            self.observer.baseline_changed(
                BaselineChange(line, "rollback", before, self.baseline, None)
            )
        self.observer.rolled_back(line, marked)
        return marked

    # --- world-state records ----------------------------------------------------------------------

    def world_state(self, line: int, full: bool, state: JsonObject) -> BaselineChange:
        """A ``world_state`` line: a full snapshot sets the baseline, a patch applies to it (or
        is ignored when there is none)."""
        self._record(_Record(line, full, state))
        before = self.baseline
        cause: ChangeCause
        if full:
            self._baseline.full(state)
            cause = "full"
        else:
            cause = "patch" if self._baseline.patch(state) else "ignored_patch"
        change = BaselineChange(
            line, cause, before, self.baseline, self.current, None if full else state
        )
        self.observer.baseline_changed(change)
        return change

    def compacted(self, line: int) -> BaselineChange:
        """A ``compacted`` line: no baseline until the next full snapshot."""
        self._record(_Record(line, None, {}))
        before = self.baseline
        self._baseline.reset()
        change = BaselineChange(line, "compacted", before, None, self.current)
        self.observer.baseline_changed(change)
        return change

    def _record(self, record: _Record) -> None:
        self._records.append((self.current, record))

    def _replay_surviving(self) -> Baseline:
        baseline = Baseline()
        for segment, record in self._records:
            if segment is not None and segment.rolled_back:
                continue
            if record.full is None:
                baseline.reset()
            elif record.full:
                baseline.full(record.state)
            else:
                baseline.patch(record.state)
        return baseline
