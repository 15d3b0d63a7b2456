"""Reconstruction: rollout lines → the state a resumed session starts from (PURE).

What belongs here: the entry points of the fold of spec/codex-worldstate.md §6 — a reverse scan
into turn segments (rollback, previous-turn settings, reference context, window), a forward pass
over the surviving tail for history, and the world-state baseline replay (``fold.py``) — and its
result type :class:`Reconstructed`. What does not: reading files (``reader.py``, ``resume.py``),
decoding lines (``lines.py``, ``entries.py``, ``classify.py``) and the raw-line hot loop
(``fast/scan.py``). No I/O, no clock.

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

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mini_codex.jsonmerge import JsonObject
from mini_codex.protocol import RolloutLine, SessionMeta, TurnContextItem, UnknownLine
from mini_codex.rollout.replay.checkpoint import (
    PreviousTurnSettings,
    WindowInfo,
)
from mini_codex.rollout.replay.classify import count_lines
from mini_codex.rollout.replay.entries import Entry, entry_from_line
from mini_codex.rollout.replay.fast import scan_lines
from mini_codex.rollout.replay.fold import Fold, Ref
from mini_codex.rollout.replay.history import History
from mini_codex.rollout.replay.lines import ReadStats

__all__ = [
    "Reconstructed",
    "reconstruct",
    "reconstruct_entries",
    "reconstruct_from_newest",
    "reconstruct_lines",
]


@dataclass(frozen=True)
class Reconstructed:
    """What a resumed session starts from."""

    history: History
    """Oldest first; items are validated on first access (a tuple given here is wrapped)."""
    world_state: JsonObject | None
    """The world-state baseline (None: the next update writes a full snapshot)."""
    reference_context: TurnContextItem | None
    previous_turn_settings: PreviousTurnSettings | None
    window: WindowInfo
    warnings: tuple[str, ...] = ()
    session_meta: SessionMeta | None = None
    stats: ReadStats = field(default_factory=ReadStats)

    def __post_init__(self) -> None:
        if not isinstance(self.history, History):
            object.__setattr__(self, "history", History.of(tuple(self.history)))

    def to_json(self) -> dict[str, Any]:
        """The ``mini-codex rollout replay --json`` object (history JSON without validation)."""
        settings = self.previous_turn_settings
        return {
            "world_state": self.world_state,
            "history": self.history.to_json(),
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

    ``stats`` is updated with kept items that do not validate; the result holds a copy.
    """
    fold = Fold(early_exit)
    feed = fold.feed
    for entry in entries_newest_first:
        if feed(entry):
            break
    else:
        fold.finish()
    return _result(fold, stats)


def reconstruct_lines(
    lines_newest_first: Iterable[Sequence[bytes]],
    *,
    early_exit: bool,
    stats: ReadStats,
    count_all: bool = False,
) -> Reconstructed:
    """The fold on raw rollout lines (blocks of lines, newest first): the replay hot path.

    Equal to :func:`reconstruct_entries` over ``classify.classify`` of each parsed line (blank
    lines skipped, whitespace around a line ignored), counted the same way (``fast/scan.py``).
    ``count_all``: when the fold stops early (at a checkpoint, or by early exit), still count the
    remaining lines into ``stats``.
    """
    fold = Fold(early_exit)
    blocks = iter(lines_newest_first)
    rest = scan_lines(fold, blocks, stats)
    if rest is None:
        fold.finish()
    elif count_all:
        count_lines(itertools.chain(rest, itertools.chain.from_iterable(blocks)), stats)
    return _result(fold, stats)


def _result(fold: Fold, stats: ReadStats) -> Reconstructed:
    history, legacy_compaction = fold.history(stats)
    reference = fold.ref_context if fold.ref is Ref.LATEST and not legacy_compaction else None
    return Reconstructed(
        history=history,
        world_state=fold.replay_world_state(),
        reference_context=reference.context() if reference is not None else None,
        previous_turn_settings=fold.settings,
        window=fold.resolve_window(),
        warnings=tuple(fold.warnings),
        session_meta=fold.session_meta,
        stats=stats.copy(),
    )
