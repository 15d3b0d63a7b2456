"""Histories whose items are built on first read, and the prompt input made of one (pure).

What belongs here: :class:`LazyHistory`, the contract of a replayed history that keeps its items
as raw JSON until someone reads them (``rollout.replay.History`` implements it),
:class:`PatchedHistory`, such a history with items left out or inserted (normalized), and
:class:`PromptItems`, a prompt's input made of such a history plus the items appended since.
What does not: deciding which raw items are valid (``rollout/replay``), encoding request bodies
(``models``).

Why (issue 13): a resumed session of 100k rollout lines holds ~40k history items. Building their
pydantic models costs more than the replay itself and several times its memory, and the first
request needs only each item's request bytes, its call/output pairing key and, for the
world-state diff, the messages' input texts. So the ``ContextManager`` keeps a resumed history
lazy (``ContextManager.replace``) and answers those questions from ``kinds``, ``input_texts``
and ``json_at`` (partial or whole parses of the raw item, no model); the providers encode the
request from the item's rollout line (``line_at``) or its JSON (issue 30). Reading an
item through the ``Sequence`` interface still gives the typed item, equal to the one the eager
path builds, so every other consumer is unchanged (only slower on first read).

:class:`PromptHistory` is the prompt input of a history that is not lazy: a tuple carrying its
``lineage``, so that a request encoder can tell in O(1) that the items it saw last time are still
the first items of this one (issue 23: a step then costs nothing per item of a long history).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any, overload

from mini_codex.protocol.items import ResponseItem
from mini_codex.world_state.state import input_texts

__all__ = ["LazyHistory", "PatchedHistory", "PromptHistory", "PromptItems"]


class LazyHistory(Sequence[ResponseItem]):
    """An immutable history whose items are validated on first read.

    ``json_at(index)`` is the item's JSON object, equal to ``self[index].to_json()`` (as a dict:
    the keys may come in the rollout's order, not the model's) and fresh (the caller may keep or
    change it), without building the model when it was not read yet;
    ``kind_at(index)`` (``kinds()`` for all) reads only its ``type`` and ``call_id``;
    ``line_at(index)`` is the rollout line it was read from, when there is one;
    ``input_texts(indexes)`` what the world-state diff reads of the messages among them.
    """

    __slots__ = ()

    @abstractmethod
    def json_at(self, index: int) -> dict[str, Any]: ...

    def line_at(self, index: int) -> bytes | None:
        """The whole rollout line item ``index`` was read from (a ``response_item`` line whose
        payload is the item, proved valid by the replay: its JSON is :meth:`json_at`'s), None
        when it has none (the providers then read :meth:`json_at`)."""
        return None

    def kind_at(self, index: int) -> tuple[Any, Any]:
        """The ``type`` and ``call_id`` of item ``index``'s JSON (None when absent); what the
        pairing index and the message lookup read (implementations may skip the rest)."""
        data = self.json_at(index)
        return data.get("type"), data.get("call_id")

    def kinds(self) -> list[tuple[Any, Any]]:
        """``kind_at`` of every item, in order."""
        return [self.kind_at(index) for index in range(len(self))]

    def input_texts(self, indexes: Sequence[int]) -> list[tuple[str, str]]:
        """The (role, text) of every ``input_text`` part of the messages among the items at
        ``indexes``, in order (what the world-state diff reads; implementations may read them
        without building the messages)."""
        return input_texts(self[index] for index in indexes)


class PatchedHistory(LazyHistory):
    """``base`` with some items left out and typed items inserted, still lazy: ``order`` holds,
    per item, its index in ``base`` or the inserted item (the normalized view of a resumed
    history whose tool calls are not all answered, ``normalize.normalize_lazy``)."""

    __slots__ = ("_base", "_order")

    def __init__(self, base: LazyHistory, order: list[int | ResponseItem]) -> None:
        self._base = base
        self._order = order

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> ResponseItem: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ResponseItem, ...]: ...

    def __getitem__(self, index: int | slice) -> ResponseItem | tuple[ResponseItem, ...]:
        if isinstance(index, slice):
            return tuple(self[position] for position in range(*index.indices(len(self))))
        entry = self._order[index]
        return self._base[entry] if type(entry) is int else entry  # type: ignore[return-value]

    def json_at(self, index: int) -> dict[str, Any]:
        entry = self._order[index]
        return self._base.json_at(entry) if type(entry) is int else entry.to_json()  # type: ignore[union-attr]

    def line_at(self, index: int) -> bytes | None:
        entry = self._order[index]
        return self._base.line_at(entry) if type(entry) is int else None

    def kind_at(self, index: int) -> tuple[Any, Any]:
        entry = self._order[index]
        return self._base.kind_at(entry) if type(entry) is int else super().kind_at(index)


class PromptItems(Sequence[ResponseItem]):
    """A prompt's input: a lazy ``prefix`` (a resumed history) followed by typed ``tail`` items.

    Equal to any sequence (tuple, list) with equal items, like the tuple it stands for.
    Iterating or indexing builds the prefix's items; the providers read ``prefix.json_at``
    instead (``models.openai_responses``).
    """

    __slots__ = ("prefix", "tail")

    def __init__(self, prefix: LazyHistory, tail: Sequence[ResponseItem]) -> None:
        self.prefix = prefix
        # A tuple is kept as it is (a ``PromptHistory`` keeps its lineage).
        self.tail: tuple[ResponseItem, ...] = tail if isinstance(tail, tuple) else tuple(tail)

    def __len__(self) -> int:
        return len(self.prefix) + len(self.tail)

    @overload
    def __getitem__(self, index: int) -> ResponseItem: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ResponseItem, ...]: ...

    def __getitem__(self, index: int | slice) -> ResponseItem | tuple[ResponseItem, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("prompt input index out of range")
        cut = len(self.prefix)
        return self.prefix[index] if index < cut else self.tail[index - cut]

    def __iter__(self) -> Iterator[ResponseItem]:
        return chain(self.prefix, self.tail)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PromptItems):
            if self.prefix is other.prefix and self.tail == other.tail:
                return True
        elif not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PromptItems({tuple(self)!r})"


class PromptHistory(tuple[ResponseItem, ...]):
    """History items as a prompt's input (a tuple, equal to any sequence, tuple or list, of the
    same items, like ``PromptItems``), with the ``lineage`` of the history they were read from.

    The contract, kept by ``ContextManager``: a history only appends items while it keeps its
    lineage, and takes a new lineage object for every other change (replacing, trimming,
    rolling back, building a lazy prefix). So of two ``PromptHistory`` with the same lineage,
    the shorter one's items are the first items of the longer one, the very same objects; an
    encoder that saw the shorter one needs to look only at the items after it.
    """

    lineage: object

    def __new__(cls, items: Sequence[ResponseItem], lineage: object) -> PromptHistory:
        self = super().__new__(cls, items)
        self.lineage = lineage
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple):
            return tuple.__eq__(self, other)
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        return (PromptHistory, (tuple(self), self.lineage))
