"""The reconstruction fold itself: the reverse scan over entries and the forward passes (PURE).

What belongs here: :class:`Fold` — the reverse scan of spec/codex-worldstate.md §6.1 into turn
segments (rollback, previous-turn settings, reference context, window, the history base), fed one
entry (``entries.Entry``) at a time newest first, or through its narrow methods by the fast path
(``fast/``), and the forward passes over what survived: the history (a lazily validated
``history.History``) and the world-state baseline (``baseline.py``). What does not: the entry
points and the result type (``reconstruct.py``, whose docstring describes the algorithm and where
it refines the reference), decoding lines (``classify.py``, ``entries.py``). No I/O, no clock.

Speed (a whole-file replay folds every line of the file): a segment keeps a valid item as its
source (``bytes``/``dict``/typed item), not as an entry, so when nothing else was kept the history
is one reversed copy of a list; settings are built from the turn context only for the segment
that decides them; world-state patches apply in place to a private copy of the newest full
snapshot (each costs its own size, not the state's).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, assert_never

from mini_codex.jsonmerge import JsonObject
from mini_codex.protocol import Message, ResponseItem, SessionMeta, message_text, user_message
from mini_codex.rollout.replay.baseline import Baseline, PendingRollback
from mini_codex.rollout.replay.checkpoint import PreviousTurnSettings, WindowInfo, uuid_v7
from mini_codex.rollout.replay.entries import (
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
    is_user_turn_boundary,
)
from mini_codex.rollout.replay.exact import item_source
from mini_codex.rollout.replay.history import History, ItemSource, materialize_item
from mini_codex.rollout.replay.lines import ReadStats

__all__ = ["MALFORMED_CHECKPOINT", "PATCH_WITHOUT_BASELINE", "Fold", "Kept", "Segment"]

PATCH_WITHOUT_BASELINE = "ignored world-state patch without a full snapshot"
"""Replay warning for a world-state patch that has no full snapshot to apply to (spec §6.3)."""

MALFORMED_CHECKPOINT = "ignored malformed mini_codex_checkpoint metadata; replaying past it"
"""Replay warning for a checkpoint whose payload does not decode (it still bases history)."""

UNDECODABLE_ITEM = "skipped a response item that does not decode"


class Ref(enum.Enum):
    NEVER_SET = "never_set"
    CLEARED = "cleared"
    LATEST = "latest"


WorldStep: TypeAlias = "WorldStateEntry | CompactedEntry | JsonObject"
"""A world-state step a segment keeps: a full snapshot, a reset, or a patch (its ``state``)."""

Kept: TypeAlias = "ItemSource | ItemEntry | InterAgentEntry | CompactedEntry"
"""What a segment keeps for history: a valid item's source, or an entry the forward pass needs
(an item that does not validate, an inter-agent line, a compaction)."""


def _compatible(active: str | None, other: str | None) -> bool:
    return active is None or other is None or active == other


@dataclass(slots=True)
class Segment:
    """One turn being scanned backwards (fields follow spec §6.1)."""

    turn_id: str | None = None
    task_framed: bool = False
    counts_as_user_turn: bool = False
    settings: TurnContextEntry | None = None
    """The turn context whose settings are the segment's previous-turn settings."""
    ref: Ref = Ref.NEVER_SET
    ref_context: TurnContextEntry | None = None
    world_state: list[WorldStep] = field(default_factory=list)
    items: list[Kept] = field(default_factory=list)
    """History-relevant entries, newest first."""
    base: CompactedEntry | None = None
    base_cut: int = 0
    """``items[:base_cut]`` are newer than ``base``."""
    window: WindowInfo | None = None

    def legacy_user_turn(self) -> bool:
        """A segment of a rollout without task events that already holds user input."""
        return self.counts_as_user_turn and self.turn_id is None and not self.task_framed


def _settings(context: TurnContextEntry | None) -> PreviousTurnSettings | None:
    if context is None:
        return None
    return PreviousTurnSettings(context.model, context.comp_hash, context.realtime_active)


class Fold:
    """The reverse scan (:meth:`feed` entries newest first, then :meth:`finish` unless a feed
    returned True) and the forward passes (:meth:`history`, :meth:`replay_world_state`,
    :meth:`resolve_window`)."""

    def __init__(self, early_exit: bool) -> None:
        self.early_exit = early_exit
        self.active: Segment | None = None
        self.rollback = PendingRollback()
        self.base: CompactedEntry | None = None
        self.suffix: list[Kept] = []
        self.specials = 0
        """How many entries (not plain item sources) went into segments' ``items``."""
        self.settings: PreviousTurnSettings | None = None
        self.ref = Ref.NEVER_SET
        self.ref_context: TurnContextEntry | None = None
        self.window: WindowInfo | None = None
        self.world_state: list[WorldStep] = []
        self.session_meta: SessionMeta | None = None
        self.compactions = 0
        self.compaction_without_number = False
        self.warnings: list[str] = []

    def segment(self) -> Segment:
        if self.active is None:
            self.active = Segment()
        return self.active

    def close_legacy(self) -> None:
        if self.active is not None and self.active.legacy_user_turn():
            self.finalize()

    def feed(self, entry: Entry) -> bool:
        """Scan one entry (newest first); True when older entries cannot change the result."""
        # Cases are ordered by frequency: this runs once per line.
        match entry:
            case ItemEntry():
                self.item(entry)
            case WorldStateEntry():
                self.add_world_state(entry.full, entry.state)
            case TurnCompleteEntry():
                self.turn_complete(entry.turn_id)
            case TurnStartedEntry():
                self.turn_started(entry.turn_id)
            case UserMessageEntry():
                self.user_message()
            case TurnContextEntry():
                self.turn_context(entry)
            case CompactedEntry():
                self.close_legacy()
                if self.compacted(entry):
                    return True
            case RolledBackEntry():
                self.rolled_back(entry.num_turns)
            case TurnAbortedEntry():
                self.turn_aborted(entry.turn_id)
            case InterAgentEntry():
                segment = self.segment()
                segment.counts_as_user_turn = True
                self.keep(segment, entry)
            case SessionMetaEntry():
                self.session_meta = entry.meta  # the oldest one seen wins
            case _:
                assert_never(entry)
        return self.early_exit and self.resolved()

    def item(self, entry: ItemEntry) -> None:
        source = entry.source
        if source is None:
            self.add_item(entry, entry.boundary, entry.closer, special=True)
        else:
            self.add_item(source, entry.boundary, entry.closer)

    def add_item(self, kept: Kept, boundary: bool, closer: bool, special: bool = False) -> None:
        """The ``ItemEntry`` case: ``kept`` is the item's source, or (``special``) its entry."""
        active = self.active
        if (
            closer
            and active is not None
            and active.counts_as_user_turn  # legacy_user_turn(), inlined: hot path
            and active.turn_id is None
            and not active.task_framed
        ):
            self.finalize()
            active = None
        if active is None:
            active = self.active = Segment()
        if boundary:
            active.counts_as_user_turn = True
        if self.base is None:  # older than the adopted base, items cannot matter
            if special:
                self.specials += 1
            active.items.append(kept)

    def closer_run(self, kept: ItemSource) -> Callable[[ItemSource], None] | None:
        """``add_item(kept, False, True)`` for a valid item that is model or tool output and no
        boundary (a tool call or output), returning what adds the next such items while nothing
        else is fed in between: the active segment's ``items.append``, or None when items are
        no longer kept (older than the adopted base). The fast path's one shortcut into a
        segment: after a closer, the active segment is never a legacy user turn, so each next
        closer is just an append."""
        self.add_item(kept, False, True)
        if self.base is None:
            return self.active.items.append  # type: ignore[union-attr]
        return None

    def add_world_state(self, full: bool, state: JsonObject) -> None:
        """The ``WorldStateEntry`` case: a full snapshot or a patch joins the active segment."""
        self.segment().world_state.append(WorldStateEntry(full, state) if full else state)

    def user_message(self) -> None:
        """The ``UserMessageEntry`` case: the active segment counts as a user turn."""
        self.segment().counts_as_user_turn = True

    def turn_complete(self, turn_id: str | None) -> None:
        self.close_legacy()
        segment = self.segment()
        segment.task_framed = True
        if segment.turn_id is None:
            segment.turn_id = turn_id

    def turn_started(self, turn_id: str | None) -> None:
        if self.active is not None and _compatible(self.active.turn_id, turn_id):
            self.finalize()

    def rolled_back(self, num_turns: int) -> None:
        if self.active is not None:
            self.finalize()
        self.rollback.add(num_turns)

    def turn_aborted(self, turn_id: str | None) -> None:
        self.close_legacy()
        if self.active is not None:
            self.active.task_framed = True
            if self.active.turn_id is None:
                self.active.turn_id = turn_id
        elif turn_id is not None:
            self.active = Segment(turn_id=turn_id, task_framed=True)

    def keep(self, segment: Segment, entry: InterAgentEntry | CompactedEntry) -> None:
        if self.base is None:  # older than the adopted base, items cannot matter
            self.specials += 1
            segment.items.append(entry)

    def turn_context(self, context: TurnContextEntry) -> None:
        segment = self.segment()
        if segment.turn_id is None:
            segment.turn_id = context.turn_id
        if _compatible(segment.turn_id, context.turn_id):
            segment.settings = context
            if segment.ref is Ref.NEVER_SET:
                segment.ref, segment.ref_context = Ref.LATEST, context

    def compacted(self, entry: CompactedEntry) -> bool:
        """Scan a compaction; True when it is a checkpoint that ends the scan."""
        segment = self.segment()
        segment.world_state.append(entry)
        if not entry.is_checkpoint:
            self.compactions += 1
            self.compaction_without_number |= entry.window is None
            if segment.window is None:
                segment.window = entry.window
            if segment.ref is Ref.NEVER_SET:
                segment.ref = Ref.CLEARED
        if segment.base is not None or not entry.has_history:
            self.keep(segment, entry)
            return False
        segment.base, segment.base_cut = entry, len(segment.items)
        checkpoint = entry.checkpoint
        if entry.is_checkpoint and checkpoint is None:
            self.warnings.append(MALFORMED_CHECKPOINT)
        if checkpoint is None or self.rollback.turns > 0 or self.base is not None:
            return False
        # A surviving checkpoint: the segment survives (a rollback marker would have closed it
        # first), and the payload stands for everything older.
        self.finalize()
        if self.settings is None:
            self.settings = checkpoint.previous_turn_settings
        if self.ref is Ref.NEVER_SET:
            context = checkpoint.reference_context
            self.ref = Ref.CLEARED if context is None else Ref.LATEST
            self.ref_context = None if context is None else TurnContextEntry.of(context)
        if self.window is None:
            self.window = checkpoint.window
        return True

    def finalize(self) -> None:
        segment, self.active = self.active, None
        if segment is None:
            return
        if self.rollback.discards(segment.counts_as_user_turn):
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
            self.settings = _settings(segment.settings)
        if self.ref is Ref.NEVER_SET and (
            segment.counts_as_user_turn or segment.ref is Ref.CLEARED
        ):
            self.ref, self.ref_context = segment.ref, segment.ref_context

    def finish(self) -> None:
        self.finalize()

    def resolved(self) -> bool:
        return (
            self.base is not None
            and self.settings is not None
            and self.ref is not Ref.NEVER_SET
            and self.window is not None
        )

    # --- forward passes ---------------------------------------------------------------------------

    def history(self, stats: ReadStats) -> tuple[History, bool]:
        """The surviving history, oldest first, and whether a legacy compaction rebuilt it.

        Items kept that do not validate (and replacement-history items, see
        :meth:`replacement`) are counted into ``stats`` as bad lines here.
        """
        sources: list[ItemSource] = []
        if self.base is not None:
            sources = self.replacement(self.base, stats)
        if not self.specials:  # only item sources: no per-item work
            sources += reversed(self.suffix)  # type: ignore[arg-type]
            return History.adopt(sources), False
        legacy_compaction = False
        for kept in reversed(self.suffix):
            match kept:
                case ItemEntry():
                    stats.bad_lines += 1
                    self.warnings.append(UNDECODABLE_ITEM)
                case InterAgentEntry():
                    sources.append(kept.model_item())
                case CompactedEntry():
                    if kept.has_history:
                        sources = self.replacement(kept, stats)
                    else:
                        legacy_compaction = True
                        typed = [materialize_item(source) for source in sources]
                        sources = list(_legacy_compacted_history(typed, kept.message))
                case _:
                    sources.append(kept)
        return History.adopt(sources), legacy_compaction

    def replacement(self, entry: CompactedEntry, stats: ReadStats) -> list[ItemSource]:
        """The sources of a compaction's replacement history, each proven valid."""
        if entry.history is not None:
            return list(entry.history)
        sources: list[ItemSource] = []
        failed = 0
        for raw in entry.raw_history or ():
            source = item_source(raw)
            if source is None:
                failed += 1
            else:
                sources.append(source)
        if failed:
            stats.bad_lines += 1
            self.warnings.append(f"dropped {failed} replacement-history item(s) that do not decode")
        return sources

    def replay_world_state(self) -> JsonObject | None:
        """The baseline after the surviving world-state steps, oldest first (spec §6.3, the
        rules of :class:`~mini_codex.rollout.replay.baseline.Baseline`): each patch without a
        baseline warns. Patches apply in place to a private copy of the newest full snapshot,
        and only those after it apply at all."""
        baseline = Baseline(in_place=True)
        patch = baseline.patch
        for step in reversed(self.world_state):
            if type(step) is dict:
                if not patch(step):
                    self.warnings.append(PATCH_WITHOUT_BASELINE)
            elif type(step) is WorldStateEntry:
                baseline.full(step.state)
            else:
                baseline.reset()
        return baseline.state

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
