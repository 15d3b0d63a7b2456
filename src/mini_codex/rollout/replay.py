"""Reconstruction: rollout lines → the state a resumed session starts from (PURE).

What belongs here: the fold of spec/codex-worldstate.md §6 — a reverse scan into turn segments
(rollback, previous-turn settings, reference context, window), a forward pass over the surviving
tail for history, and the world-state baseline replay — plus its result type
:class:`Reconstructed`. What does not: reading files (``reader.py``, ``resume.py``) and decoding
lines (``lines.py``, ``entries.py``, ``classify.py``). No I/O, no clock.

Two entry points share one scan. :func:`reconstruct` takes lines in file order and scans back to
the first line (or to a surviving mini-codex checkpoint, whose payload stands for everything older);
:func:`reconstruct_from_newest` takes lines newest first and also stops as soon as older lines can
no longer change the result (§6.1 early exit), so a resume reads only the tail. They agree on
every well-formed rollout (property-tested), and a checkpoint changes no result (property-tested).

Where this differs from (or refines) the reference algorithm:

* Rollback is resolved in the reverse scan: a rolled-back segment is discarded whole — its history
  items and compactions included — and the forward pass does not re-apply ``thread_rolled_back``.
  For well-formed rollouts this equals dropping the last N user turns from history; it differs only
  where a rolled-back turn held a compaction, whose replacement history must not survive (I6).
  A rollback marker is written between turns, so it also closes any open segment.
* Rollouts without task events (Codex 2025 files) have no ``task_started`` to close a segment.
  A segment with no turn id and no task event that already holds user input (a ``user_message``
  event or a user-turn boundary item) is closed when the scan meets an older item that cannot be
  part of that input: model or tool output (assistant message, reasoning, tool call or output), a
  compaction, or a turn-complete/abort event. User/developer messages, ``turn_context`` and
  ``world_state`` lines before the user input stay in its turn.
* Early exit also waits for the window identity, so it never changes the window (§6.4).
* mini-codex checkpoints (see ``checkpoint.py``): the scan stops at the newest surviving one;
  settings, reference and window not decided by newer lines come from its payload.
* Legacy compaction without a replacement history: history becomes the collected user messages
  plus the summary as a user message (Codex's token cap on the collected messages is not applied).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from mini_codex.jsonmerge import JsonObject, apply_merge_patch
from mini_codex.protocol import (
    Message,
    ResponseItem,
    RolloutLine,
    SessionMeta,
    TurnContextItem,
    UnknownLine,
    message_text,
    user_message,
)
from mini_codex.rollout.checkpoint import (
    PreviousTurnSettings,
    WindowInfo,
    checkpoint_payload,
    uuid_v7,
)
from mini_codex.rollout.entries import (
    CompactedEntry,
    Entry,
    InterAgentEntry,
    ItemEntry,
    RolledBackEntry,
    SessionMetaEntry,
    TurnAbortedEntry,
    TurnCompleteEntry,
    TurnContextEntry,
    TurnStartedEntry,
    UserMessageEntry,
    WorldStateEntry,
    entry_from_line,
    is_user_turn_boundary,
)
from mini_codex.rollout.lines import DECODE_ERRORS, ReadStats

__all__ = [
    "MALFORMED_CHECKPOINT",
    "PATCH_WITHOUT_BASELINE",
    "PreviousTurnSettings",
    "Reconstructed",
    "WindowInfo",
    "checkpoint_payload",
    "reconstruct",
    "reconstruct_entries",
    "reconstruct_from_newest",
]

PATCH_WITHOUT_BASELINE = "ignored world-state patch without a full snapshot"
"""Replay warning for a world-state patch that has no full snapshot to apply to (spec §6.3)."""

MALFORMED_CHECKPOINT = "ignored malformed mini_codex_checkpoint metadata; replaying past it"
"""Replay warning for a checkpoint whose payload does not decode (it still bases history)."""


@dataclass(frozen=True)
class Reconstructed:
    """What a resumed session starts from."""

    history: tuple[ResponseItem, ...]
    world_state: JsonObject | None
    """The world-state baseline (None: the next update writes a full snapshot)."""
    reference_context: TurnContextItem | None
    previous_turn_settings: PreviousTurnSettings | None
    window: WindowInfo
    warnings: tuple[str, ...] = ()
    session_meta: SessionMeta | None = None
    stats: ReadStats = field(default_factory=ReadStats)

    def to_json(self) -> dict[str, Any]:
        """The ``mini-codex rollout replay --json`` object."""
        settings = self.previous_turn_settings
        return {
            "world_state": self.world_state,
            "history": [item.to_json() for item in self.history],
            "reference_context": (
                self.reference_context.to_json() if self.reference_context is not None else None
            ),
            "previous_model": settings.model if settings is not None else None,
            "window": self.window.to_json(),
            "warnings": list(self.warnings),
            "stats": self.stats.to_json(),
        }


def reconstruct(lines: Iterable[RolloutLine], stats: ReadStats | None = None) -> Reconstructed:
    """Reconstruct from lines in file order, scanning all of them.

    ``stats`` (the reader's counters) is reported in the result; by default the given lines are
    counted (none bad).
    """
    ordered = list(lines)
    if stats is None:
        stats = ReadStats(
            lines=len(ordered),
            unknown_items=sum(isinstance(line, UnknownLine) for line in ordered),
        )
    entries = [entry for line in ordered if (entry := entry_from_line(line)) is not None]
    entries.reverse()
    return reconstruct_entries(entries, early_exit=False, stats=stats)


def reconstruct_from_newest(
    lines_newest_first: Iterable[RolloutLine], stats: ReadStats | None = None
) -> Reconstructed:
    """Reconstruct from lines newest first, consuming only the tail the result depends on."""
    counted = ReadStats() if stats is None else stats
    own_count = stats is None

    def entries() -> Iterable[Entry]:
        for line in lines_newest_first:
            if own_count:
                counted.lines += 1
                counted.unknown_items += isinstance(line, UnknownLine)
            entry = entry_from_line(line)
            if entry is not None:
                yield entry

    return reconstruct_entries(entries(), early_exit=True, stats=counted)


def reconstruct_entries(
    entries_newest_first: Iterable[Entry], *, early_exit: bool, stats: ReadStats
) -> Reconstructed:
    """The fold on replay entries, newest first (``classify.classify`` builds them from JSON).

    ``stats`` is updated with response items that fail validation when materialized; the result
    holds a copy.
    """
    scan = _Scan(early_exit)
    feed = scan.feed
    for entry in entries_newest_first:
        if feed(entry):
            break
    else:
        scan.finish()
    return scan.result(stats)


# --- reverse scan ---------------------------------------------------------------------------------


class _Ref(enum.Enum):
    NEVER_SET = "never_set"
    CLEARED = "cleared"
    LATEST = "latest"


def _compatible(active: str | None, other: str | None) -> bool:
    return active is None or other is None or active == other


@dataclass(slots=True)
class _Segment:
    """One turn being scanned backwards (fields follow spec §6.1)."""

    turn_id: str | None = None
    task_framed: bool = False
    counts_as_user_turn: bool = False
    settings: PreviousTurnSettings | None = None
    ref: _Ref = _Ref.NEVER_SET
    ref_context: TurnContextItem | None = None
    world_state: list[WorldStateEntry | CompactedEntry] = field(default_factory=list)
    items: list[ItemEntry | InterAgentEntry | CompactedEntry] = field(default_factory=list)
    """History-relevant entries, newest first."""
    base: CompactedEntry | None = None
    base_cut: int = 0
    """``items[:base_cut]`` are newer than ``base``."""
    window: WindowInfo | None = None

    def legacy_user_turn(self) -> bool:
        """A segment of a rollout without task events that already holds user input."""
        return self.counts_as_user_turn and self.turn_id is None and not self.task_framed


class _Scan:
    def __init__(self, early_exit: bool) -> None:
        self.early_exit = early_exit
        self.active: _Segment | None = None
        self.pending_rollback = 0
        self.base: CompactedEntry | None = None
        self.suffix: list[ItemEntry | InterAgentEntry | CompactedEntry] = []
        self.settings: PreviousTurnSettings | None = None
        self.ref = _Ref.NEVER_SET
        self.ref_context: TurnContextItem | None = None
        self.window: WindowInfo | None = None
        self.world_state: list[WorldStateEntry | CompactedEntry] = []
        self.session_meta: SessionMeta | None = None
        self.compactions = 0
        self.compaction_without_number = False
        self.warnings: list[str] = []

    def segment(self) -> _Segment:
        if self.active is None:
            self.active = _Segment()
        return self.active

    def close_legacy(self) -> None:
        if self.active is not None and self.active.legacy_user_turn():
            self.finalize()

    def feed(self, entry: Entry) -> bool:
        """Scan one entry (newest first); True when older entries cannot change the result."""
        # Cases are ordered by frequency: this runs once per line.
        match entry:
            case ItemEntry():
                active = self.active
                if (
                    entry.closer
                    and active is not None
                    and active.counts_as_user_turn  # legacy_user_turn(), inlined: hot path
                    and active.turn_id is None
                    and not active.task_framed
                ):
                    self.finalize()
                    active = None
                if active is None:
                    active = self.active = _Segment()
                if entry.boundary:
                    active.counts_as_user_turn = True
                if self.base is None:  # older than the adopted base, items cannot matter
                    active.items.append(entry)
            case WorldStateEntry():
                self.segment().world_state.append(entry)
            case TurnCompleteEntry():
                self.close_legacy()
                segment = self.segment()
                segment.task_framed = True
                if segment.turn_id is None:
                    segment.turn_id = entry.turn_id
            case TurnStartedEntry():
                if self.active is not None and _compatible(self.active.turn_id, entry.turn_id):
                    self.finalize()
            case UserMessageEntry():
                self.segment().counts_as_user_turn = True
            case TurnContextEntry():
                self.turn_context(entry.context)
            case CompactedEntry():
                self.close_legacy()
                if self.compacted(entry):
                    return True
            case RolledBackEntry():
                if self.active is not None:
                    self.finalize()
                self.pending_rollback += entry.num_turns
            case TurnAbortedEntry():
                self.close_legacy()
                if self.active is not None:
                    self.active.task_framed = True
                    if self.active.turn_id is None:
                        self.active.turn_id = entry.turn_id
                elif entry.turn_id is not None:
                    self.active = _Segment(turn_id=entry.turn_id, task_framed=True)
            case InterAgentEntry():
                segment = self.segment()
                segment.counts_as_user_turn = True
                self.keep(segment, entry)
            case SessionMetaEntry():
                self.session_meta = entry.meta  # the oldest one seen wins
            case _:
                assert_never(entry)
        return self.early_exit and self.resolved()

    def keep(self, segment: _Segment, entry: ItemEntry | InterAgentEntry | CompactedEntry) -> None:
        if self.base is None:  # older than the adopted base, items cannot matter
            segment.items.append(entry)

    def turn_context(self, context: TurnContextItem) -> None:
        segment = self.segment()
        if segment.turn_id is None:
            segment.turn_id = context.turn_id
        if _compatible(segment.turn_id, context.turn_id):
            segment.settings = PreviousTurnSettings(
                context.model, context.comp_hash, context.realtime_active
            )
            if segment.ref is _Ref.NEVER_SET:
                segment.ref, segment.ref_context = _Ref.LATEST, context

    def compacted(self, entry: CompactedEntry) -> bool:
        """Scan a compaction; True when it is a checkpoint that ends the scan."""
        segment = self.segment()
        segment.world_state.append(entry)
        if not entry.is_checkpoint:
            self.compactions += 1
            self.compaction_without_number |= entry.window is None
            if segment.window is None:
                segment.window = entry.window
            if segment.ref is _Ref.NEVER_SET:
                segment.ref = _Ref.CLEARED
        if segment.base is not None or not entry.has_history:
            self.keep(segment, entry)
            return False
        segment.base, segment.base_cut = entry, len(segment.items)
        checkpoint = entry.checkpoint
        if entry.is_checkpoint and checkpoint is None:
            self.warnings.append(MALFORMED_CHECKPOINT)
        if checkpoint is None or self.pending_rollback > 0 or self.base is not None:
            return False
        # A surviving checkpoint: the segment survives (a rollback marker would have closed it
        # first), and the payload stands for everything older.
        self.finalize()
        if self.settings is None:
            self.settings = checkpoint.previous_turn_settings
        if self.ref is _Ref.NEVER_SET:
            context = checkpoint.reference_context
            self.ref = _Ref.CLEARED if context is None else _Ref.LATEST
            self.ref_context = context
        if self.window is None:
            self.window = checkpoint.window
        return True

    def finalize(self) -> None:
        segment, self.active = self.active, None
        if segment is None:
            return
        if self.pending_rollback > 0:
            if segment.counts_as_user_turn:
                self.pending_rollback -= 1
            return
        if self.base is None:
            self.world_state.extend(segment.world_state)
            if segment.base is not None:
                self.suffix.extend(segment.items[: segment.base_cut])
                self.base = segment.base
            else:
                self.suffix.extend(segment.items)
        if self.window is None:
            self.window = segment.window
        if self.settings is None and segment.counts_as_user_turn:
            self.settings = segment.settings
        if self.ref is _Ref.NEVER_SET and (
            segment.counts_as_user_turn or segment.ref is _Ref.CLEARED
        ):
            self.ref, self.ref_context = segment.ref, segment.ref_context

    def finish(self) -> None:
        self.finalize()

    def resolved(self) -> bool:
        return (
            self.base is not None
            and self.settings is not None
            and self.ref is not _Ref.NEVER_SET
            and self.window is not None
        )

    # --- forward passes ---------------------------------------------------------------------------

    def result(self, stats: ReadStats) -> Reconstructed:
        history, legacy_compaction = self.history(stats)
        reference = self.ref_context if self.ref is _Ref.LATEST and not legacy_compaction else None
        return Reconstructed(
            history=tuple(history),
            world_state=self.replay_world_state(),
            reference_context=reference,
            previous_turn_settings=self.settings,
            window=self.resolve_window(),
            warnings=tuple(self.warnings),
            session_meta=self.session_meta,
            stats=stats.copy(),
        )

    def history(self, stats: ReadStats) -> tuple[list[ResponseItem], bool]:
        history: list[ResponseItem] = []
        if self.base is not None:
            history = self.replacement(self.base, stats)
        legacy_compaction = False
        for entry in reversed(self.suffix):
            match entry:
                case ItemEntry():
                    try:
                        history.append(entry.materialize())
                    except DECODE_ERRORS:
                        stats.bad_lines += 1
                        self.warnings.append("skipped a response item that does not decode")
                case InterAgentEntry():
                    history.append(entry.model_item())
                case CompactedEntry():
                    if entry.has_history:
                        history = self.replacement(entry, stats)
                    else:
                        legacy_compaction = True
                        history = _legacy_compacted_history(history, entry.message)
                case _:
                    assert_never(entry)
        return history, legacy_compaction

    def replacement(self, entry: CompactedEntry, stats: ReadStats) -> list[ResponseItem]:
        items, failed = entry.materialize_history()
        if failed:
            stats.bad_lines += 1
            self.warnings.append(f"dropped {failed} replacement-history item(s) that do not decode")
        return items

    def replay_world_state(self) -> JsonObject | None:
        baseline: JsonObject | None = None
        for entry in reversed(self.world_state):
            match entry:
                case CompactedEntry():
                    baseline = None
                case WorldStateEntry(full=True):
                    baseline = entry.state
                case WorldStateEntry():
                    if baseline is None:
                        self.warnings.append(PATCH_WITHOUT_BASELINE)
                        continue
                    patched = apply_merge_patch(baseline, entry.state)
                    baseline = patched if isinstance(patched, dict) else None
                case _:
                    assert_never(entry)
        return baseline

    def resolve_window(self) -> WindowInfo:
        if self.window is not None:
            return self.window
        meta = self.session_meta
        if not self.compaction_without_number and meta is not None and meta.context_window:
            window_id = uuid_v7(meta.context_window.window_id)
            if window_id is not None:
                return WindowInfo(0, window_id, None, window_id)
        return WindowInfo(self.compactions)


def _legacy_compacted_history(history: Sequence[ResponseItem], summary: str) -> list[ResponseItem]:
    """Collected user messages plus the summary as a user message (spec §6.2)."""
    collected: list[ResponseItem] = [
        user_message(message_text(item))
        for item in history
        if isinstance(item, Message) and item.role == "user" and is_user_turn_boundary(item)
    ]
    collected.append(user_message(summary))
    return collected
