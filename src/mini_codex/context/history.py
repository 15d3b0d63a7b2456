"""``ContextManager``: the in-memory model history and its world-state baseline (spec §3).

What belongs here: the retained history items (oldest to newest), the world-state baseline
("the world state most recently appended to model-visible history") and the rules tying them
together: appends keep the baseline, every rewrite of history clears it (DESIGN I4), and
:meth:`ContextManager.update_world_state` turns a world state into fragments plus the rollout
item to record (a FULL snapshot when there is no baseline, DESIGN I3). What does not: turning
fragments into messages (``world_state.messages``), writing rollouts (the recorder), and prompt
normalization (``normalize.py``, used by :meth:`ContextManager.for_prompt`).

The caller keeps the ordering invariant (DESIGN I1): record the messages made from the returned
fragments into history, then write the returned ``world_state`` item.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mini_codex.context.contextual import is_user_input_message
from mini_codex.context.lazy import LazyHistory, PromptHistory, PromptItems
from mini_codex.context.normalize import (
    PairingIndex,
    normalize_history,
    normalize_lazy,
    normalize_lazy_tail,
    paired_call_id,
)
from mini_codex.protocol.items import ResponseItem
from mini_codex.protocol.rollout import WorldStateItem
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.snapshot import WorldStateSnapshot
from mini_codex.world_state.state import InputTexts, WorldState, input_texts

__all__ = ["ContextManager", "is_user_turn_start"]


def is_user_turn_start(item: ResponseItem) -> bool:
    """Whether ``item`` is user input that starts a user turn.

    That is a ``user`` message none of whose ``input_text`` parts is an injected context fragment
    (``context.contextual``: the one rule shared with rollout replay and verification). A user
    message without any ``input_text`` part (only images) is user input.
    """
    return is_user_input_message(item)


class ContextManager:
    """Retained model history, oldest to newest, plus the world-state baseline.

    Items are frozen pydantic models; the manager never modifies them, and ``items`` /
    ``for_prompt()`` return new sequences.

    A resumed history (a ``LazyHistory``, given to :meth:`replace`) stays lazy: appends go
    after it, the pairing index reads its ``kinds()``, the world-state diff its messages'
    ``input_texts`` (no item built), and ``for_prompt`` hands it on inside a ``PromptItems``
    (as a lazy normalized view when a tool call is unanswered, ``normalize_lazy``). The first
    edit that needs typed items (trimming, rollback, ``items``) builds them all (``_typed``).
    """

    def __init__(
        self,
        items: Iterable[ResponseItem] = (),
        *,
        world_state_baseline: WorldStateSnapshot | None = None,
    ) -> None:
        self._items: list[ResponseItem] = list(items)
        self._lazy: LazyHistory | None = None
        """A resumed history not built yet: it comes before ``_items``."""
        self._lazy_messages: list[int] | None = None
        """The indexes of the messages in ``_lazy``, found with the pairing keys."""
        self._baseline = world_state_baseline
        self._pairing: PairingIndex | None = None
        """Call/output keys of ``_items``, built on first use, kept up to date on appends."""
        self._lineage = object()
        """Replaced by every change to the items but an append (``PromptHistory``)."""
        self._normalized: tuple[LazyHistory, frozenset[tuple[str, str]], LazyHistory] | None
        self._normalized = None
        """``_lazy``, the keys of its orphan calls and outputs and its normalized view."""

    def _typed(self) -> list[ResponseItem]:
        """All items as typed items (builds a lazy prefix once)."""
        if self._lazy is not None:
            self._items[:0] = self._lazy
            self._lazy = self._lazy_messages = self._normalized = None
            self._lineage = object()
        return self._items

    def _index_lazy(self, lazy: LazyHistory) -> PairingIndex:
        """The pairing index of ``lazy`` + ``_items`` and the message indexes of ``lazy``, from
        each lazy item's ``type`` and ``call_id`` (``kinds()``: no model, no whole parse)."""
        kinds = lazy.kinds()
        pairing = PairingIndex.of_kinds(kinds)
        messages = [index for index, (kind, _) in enumerate(kinds) if kind == "message"]
        pairing.add(self._items)
        self._lazy_messages = messages
        return pairing

    # --- reading ----------------------------------------------------------------------------

    @property
    def items(self) -> tuple[ResponseItem, ...]:
        """The retained history as stored (not normalized), oldest first."""
        return tuple(self._typed())

    @property
    def world_state_baseline(self) -> WorldStateSnapshot | None:
        """The world state most recently appended to model-visible history, if known."""
        return self._baseline

    def __len__(self) -> int:
        lazy = self._lazy
        return len(self._items) + (len(lazy) if lazy is not None else 0)

    def for_prompt(self) -> Sequence[ResponseItem]:
        """The history to send to the model: normalized, stored items left untouched (a
        ``PromptItems`` while a resumed history is still lazy; else a ``PromptHistory`` of the
        stored items, or a new list when normalizing changed them)."""
        lazy = self._lazy
        if self._pairing is None:
            self._pairing = PairingIndex(self._items) if lazy is None else self._index_lazy(lazy)
        if self._pairing.balanced:
            # what normalize_history returns, without the walk
            stored = PromptHistory(self._items, self._lineage)
            return stored if lazy is None else PromptItems(lazy, stored)
        if lazy is None:
            return normalize_history(self._items)
        # The lazy prefix's normalized view is kept while its orphans stay unmatched (the
        # same object: the provider reuses its encoded chunks).
        kept = self._normalized
        if kept is not None and kept[0] is lazy and kept[1] <= self._pairing.unmatched:
            return PromptItems(kept[2], normalize_lazy_tail(self._items, self._pairing))
        view, tail, orphans = normalize_lazy(lazy, self._items, self._pairing)
        self._normalized = (lazy, orphans, view)
        return PromptItems(view, tail)

    # --- appending (keeps the baseline) -----------------------------------------------------

    def record_items(self, items: Iterable[ResponseItem]) -> None:
        """Append items to history. Never touches the baseline."""
        start = len(self._items)
        self._items.extend(items)
        if self._pairing is not None:
            self._pairing.add(self._items[start:])

    # --- rewriting (clears the baseline) ----------------------------------------------------

    def replace(self, items: Iterable[ResponseItem]) -> None:
        """Replace the whole history (compaction, resume install, rollback); clears the baseline.

        A ``LazyHistory`` is kept as it is (not built; see the class docs)."""
        if isinstance(items, LazyHistory):
            self._lazy, self._items = items, []
        else:
            self._lazy, self._items = None, list(items)
        self._lineage = object()
        self._lazy_messages = self._normalized = None
        self._baseline = None
        self._pairing = None

    def remove_first_item(self) -> ResponseItem | None:
        """Drop the oldest item (and the other half of its call/output pair); clears the baseline.

        Returns the removed item, or ``None`` when history was empty.
        """
        self._baseline = None
        self._pairing = None
        items = self._typed()
        if not items:
            return None
        self._lineage = object()
        removed = items.pop(0)
        key = paired_call_id(removed)
        if key is not None:
            self._items = [item for item in self._items if paired_call_id(item) != key]
        return removed

    def drop_last_n_user_turns(self, n: int) -> None:
        """Cut history before the n-th last user turn (see ``is_user_turn_start``).

        When ``n`` is at least the number of user turns, everything from the first user turn on
        is dropped and the context before it is kept. ``n <= 0`` or no user turn keeps
        everything. Always ends with ``replace``, so the baseline is cleared in every case.
        """
        items = self._typed()
        starts = [index for index, item in enumerate(items) if is_user_turn_start(item)]
        keep = len(items)
        if n > 0 and starts:
            keep = starts[0] if n >= len(starts) else starts[-n]
        self.replace(items[:keep])

    # --- world-state baseline ---------------------------------------------------------------

    def set_world_state_baseline(self, snapshot: WorldStateSnapshot | None) -> None:
        """Install a baseline directly (full initial context, steps, compaction, resume)."""
        self._baseline = snapshot

    def update_world_state(
        self, world_state: WorldState
    ) -> tuple[list[Fragment], WorldStateItem | None]:
        """The history-aware diff of ``world_state`` and the rollout item describing it.

        Fragments come from ``render_history_diff`` against the baseline and all retained
        history. The item is a FULL snapshot when there was no baseline (even if nothing was
        rendered), otherwise the merge patch from the baseline, or ``None`` if unchanged. The
        baseline is replaced by the new snapshot in every case.
        """
        snapshot = world_state.snapshot()
        fragments = world_state.render_history_diff(self._baseline, self._retained_history())
        item: WorldStateItem | None
        if self._baseline is None:
            item = WorldStateItem(full=True, state=snapshot.to_json())
        else:
            patch = snapshot.merge_patch_from(self._baseline)
            item = None if patch is None else WorldStateItem(full=False, state=patch)
        self._baseline = snapshot
        return fragments, item

    def _retained_history(self) -> Sequence[ResponseItem] | InputTexts:
        """What ``render_history_diff`` reads of history: all items while nothing is lazy, else
        the input texts of its messages (a lazy history reads its own without building them)."""
        lazy = self._lazy
        if lazy is None:
            return self._items
        if self._lazy_messages is None:
            self._pairing = self._index_lazy(lazy)
        messages = self._lazy_messages
        assert messages is not None
        appended = tuple(self._items)
        return InputTexts(lambda: [*lazy.input_texts(messages), *input_texts(appended)])
