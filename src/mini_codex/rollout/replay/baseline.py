"""The world-state baseline rules (spec §6.3) and the rollback rule (§6.1), written once (PURE).

What belongs here: :class:`Baseline` — the world-state baseline stepped through a rollout's
world-state records (a compaction resets it, a full snapshot sets it, a patch applies to it; a
patch with no baseline changes nothing and the caller warns) — and :class:`PendingRollback` —
``thread_rolled_back(n)`` discards whole turn segments, newest first, until ``n`` user turns are
gone, and a segment without user input goes without using up the count. What does not: which
records survive (the reverse :class:`~mini_codex.rollout.replay.fold.Fold` for reconstruction,
the forward :class:`~mini_codex.rollout.replay.forward.ForwardReplay` for the readers) and the
warning texts (``fold.PATCH_WITHOUT_BASELINE``; the readers word theirs).

Two ways to hold the state: by default (``in_place=False``) every patch makes a new snapshot with
:func:`~mini_codex.jsonmerge.apply_merge_patch` (inputs are never changed and untouched subtrees
are shared, so a reader may keep every intermediate state); with ``in_place=True`` patches are
only collected and applied when :attr:`Baseline.state` is read, in place, to a private copy of
the newest full snapshot's objects — each patch costs its own size, and patches a later reset
discards are never applied (the whole-file replay of P2 reads the state once, at the end).
"""

from __future__ import annotations

from typing import Any, cast

from mini_codex.jsonmerge import JsonObject, apply_merge_patch

__all__ = ["Baseline", "PendingRollback"]


class Baseline:
    """The world-state baseline, one record at a time (spec §6.3)."""

    __slots__ = ("_in_place", "_owned", "_pending", "_state")

    def __init__(self, *, in_place: bool = False) -> None:
        self._in_place = in_place
        self._state: JsonObject | None = None
        self._pending: list[JsonObject] = []
        self._owned = False

    @property
    def known(self) -> bool:
        """Is there a baseline (a patch applies)?"""
        return self._state is not None

    @property
    def state(self) -> JsonObject | None:
        """The baseline now (None: the next update writes a full snapshot).

        With ``in_place``, the returned object belongs to this baseline and changes with later
        patches; without, it is never changed.
        """
        pending = self._pending
        if pending:
            state = self._state
            if self._in_place:
                if not self._owned:
                    state = _copy_objects(state)  # type: ignore[arg-type]
                    self._owned = True
                for patch in pending:
                    _merge_into(state, patch)  # type: ignore[arg-type]
            else:
                for patch in pending:
                    state = cast(JsonObject, apply_merge_patch(state, patch))
            self._state = state
            self._pending = []
        return self._state

    def reset(self) -> None:
        """A ``compacted`` record: no baseline."""
        self._state = None
        self._pending = []

    def full(self, state: JsonObject) -> None:
        """A full ``world_state``: the baseline is ``state`` (never changed here)."""
        self._state = state
        self._pending = []
        self._owned = False

    def patch(self, patch: JsonObject) -> bool:
        """A ``world_state`` patch: applied to the baseline; False, changing nothing, when there
        is no baseline (replay ignores the patch with a warning)."""
        if self._state is None:
            return False
        self._pending.append(patch)
        return True


class PendingRollback:
    """User turns a ``thread_rolled_back`` still has to discard (spec §6.1).

    Segments are offered newest first; :meth:`discards` says whether the offered segment goes.
    """

    __slots__ = ("turns",)

    def __init__(self, turns: int = 0) -> None:
        self.turns = turns

    def add(self, turns: int) -> None:
        self.turns += turns

    def discards(self, user_turn: bool) -> bool:
        """Is the next older segment discarded? It is while user turns remain to drop; only a
        segment that counts as a user turn uses one up."""
        if self.turns <= 0:
            return False
        if user_turn:
            self.turns -= 1
        return True


_SCALARS = frozenset({str, int, float, bool})


def _copy_objects(value: JsonObject) -> JsonObject:
    """A copy of ``value`` whose objects (at any depth outside arrays) are new; arrays and
    scalars are shared (a merge patch replaces them, never changes them in place)."""
    return {
        key: _copy_objects(member) if isinstance(member, dict) else member
        for key, member in value.items()
    }


def _merge_into(target: dict[str, Any], patch: JsonObject) -> None:
    """Apply the RFC 7396 object ``patch`` to ``target`` in place (``target`` and every object
    in it belong to the caller). Equal to ``apply_merge_patch(target, patch)``; values taken
    from ``patch`` are copied."""
    for key, value in patch.items():
        if type(value) in _SCALARS:
            target[key] = value
        elif value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            existing = target.get(key)
            if isinstance(existing, dict):
                _merge_into(existing, value)
            else:
                target[key] = apply_merge_patch(None, value)  # a copy without nulls
        else:
            target[key] = apply_merge_patch(None, value)  # a copy (arrays are copied deeply)
