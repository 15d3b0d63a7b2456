"""The replayed history: an immutable sequence of response items validated on first access (pure).

What belongs here: :class:`History`, the ``Reconstructed.history`` of a replay, and
:data:`ItemSource`, what it holds per item until someone reads it. What does not: deciding which
items survive (``reconstruct.py``) or whether a raw item is valid (``classify.py``).

Why lazy: a whole-file replay keeps hundreds of thousands of items, and building their pydantic
models costs several times the JSON parse of the file; most callers (``rollout replay --json``,
the benchmark, a resume that only needs the tail of a long history) read few of them, or only
their JSON. The fold proves every kept raw item valid when it classifies it (an exact-type check,
or pydantic itself when that check is not conclusive), so reading an item never fails: validation
here cannot raise for a source the fold produced.

A source is one of:

* a typed item (``ResponseItem``): returned as is;
* ``bytes``: a whole rollout line ``{"timestamp", "type": "response_item", "payload": item}``,
  kept as text (no Python objects to track, a fraction of the memory of the parsed item);
* a ``dict``: the item's parsed JSON (replacement histories, legacy bare items).

A ``History`` equals another ``History`` or a tuple with equal items, like the tuple it stands
for; :meth:`History.to_json` gives the items' JSON without building models.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeAlias, overload

import msgspec
import orjson

from mini_codex.context.lazy import LazyHistory
from mini_codex.protocol import ResponseItem
from mini_codex.protocol.items import RESPONSE_ITEM_ADAPTER

__all__ = ["History", "ItemSource", "item_json", "materialize_item"]

ItemSource: TypeAlias = "ResponseItem | bytes | dict[str, Any]"
"""What a :class:`History` holds per item until it is read (see the module docstring)."""

_validate = RESPONSE_ITEM_ADAPTER.validate_python
_loads = orjson.loads


class _Kind(msgspec.Struct, gc=False):
    type: Any = None
    call_id: Any = None


class _KindLine(msgspec.Struct, gc=False):
    payload: _Kind


_decode_kind = msgspec.json.Decoder(_KindLine).decode


class _Part(msgspec.Struct, gc=False):
    type: Any = None
    text: Any = None


class _Texts(msgspec.Struct, gc=False):
    type: Any = None
    role: Any = None
    content: list[_Part] | None = None


class _TextsLine(msgspec.Struct, gc=False):
    payload: _Texts


_decode_texts = msgspec.json.Decoder(_TextsLine).decode


def _line_texts(source: bytes) -> list[tuple[str, str]] | None:
    """The (role, text) of the ``input_text`` parts of the message of line ``source`` (the
    ``InputText`` parts its model has: those whose ``type`` is ``"input_text"``), read without
    the model; None when the line is not plainly that (the caller builds the item)."""
    try:
        message = _decode_texts(source).payload
    except msgspec.MsgspecError:
        return None
    role, content = message.role, message.content
    if message.type != "message" or type(role) is not str or content is None:
        return None
    texts: list[tuple[str, str]] = []
    for part in content:
        if part.type == "input_text":
            if type(part.text) is not str:
                return None
            texts.append((role, part.text))
    return texts


def materialize_item(source: ItemSource) -> ResponseItem:
    """The typed item of ``source`` (a source the fold proved valid never raises)."""
    kind = type(source)
    if kind is bytes:
        return _validate(_loads(source)["payload"])  # type: ignore[arg-type]
    if kind is dict:
        return _validate(source)
    return source  # type: ignore[return-value]


def item_json(source: ItemSource) -> dict[str, Any]:
    """The JSON object of ``source`` (equal to ``materialize_item(source).to_json()``), fresh."""
    kind = type(source)
    if kind is bytes:
        payload: dict[str, Any] = _loads(source)["payload"]  # type: ignore[arg-type]
        return payload
    if kind is dict:
        copy: dict[str, Any] = _loads(orjson.dumps(source))
        return copy
    return source.to_json()  # type: ignore[union-attr]


class History(LazyHistory):
    """An immutable sequence of response items, each validated (and cached) on first access.

    A ``context.LazyHistory``: a resumed session keeps it lazy (``ContextManager.replace``).
    """

    __slots__ = ("_items", "_sources")

    def __init__(self, sources: Sequence[ItemSource] = ()) -> None:
        self._sources: Sequence[ItemSource] = tuple(sources)
        self._items: list[ResponseItem | None] | None = None  # the cache, made on first read

    @classmethod
    def adopt(cls, sources: list[ItemSource]) -> History:
        """A history of ``sources``, taking the list over (the caller drops it; no copy)."""
        history = cls()
        history._sources = sources
        return history

    @classmethod
    def of(cls, items: Sequence[ResponseItem]) -> History:
        """A history of typed items."""
        history = cls(items)
        history._items = list(items)
        return history

    def __len__(self) -> int:
        return len(self._sources)

    @overload
    def __getitem__(self, index: int) -> ResponseItem: ...

    @overload
    def __getitem__(self, index: slice) -> History: ...

    def __getitem__(self, index: int | slice) -> ResponseItem | History:
        if isinstance(index, slice):
            return History.of(self._materialized()[index])
        items = self._items
        if items is None:
            items = self._items = [None] * len(self._sources)
        item = items[index]
        if item is None:
            item = items[index] = materialize_item(self._sources[index])
        return item

    def __iter__(self) -> Iterator[ResponseItem]:
        return iter(self._materialized())

    def _materialized(self) -> list[ResponseItem]:
        items = self._items
        if items is None:
            items = self._items = [materialize_item(source) for source in self._sources]
        elif None in items:
            for index, item in enumerate(items):
                if item is None:
                    items[index] = materialize_item(self._sources[index])
        return items  # type: ignore[return-value]

    def json_at(self, index: int) -> dict[str, Any]:
        """The JSON of item ``index`` (``self[index].to_json()``), without validating it."""
        items = self._items
        item = items[index] if items is not None else None
        return item.to_json() if item is not None else item_json(self._sources[index])

    def line_at(self, index: int) -> bytes | None:
        """The rollout line item ``index`` was read from (also once read: its model's JSON
        equals the line's payload)."""
        source = self._sources[index]
        return source if type(source) is bytes else None

    def kind_at(self, index: int) -> tuple[Any, Any]:
        """``(type, call_id)`` of item ``index``; a raw line is decoded into just those two
        fields (msgspec skips the rest: a third of the cost of parsing the whole line)."""
        source = self._sources[index]
        items = self._items
        if type(source) is bytes and (items is None or items[index] is None):
            try:
                facts = _decode_kind(source).payload
            except msgspec.MsgspecError:
                pass  # orjson accepted the line (replay did); let it decide
            else:
                return facts.type, facts.call_id
        return super().kind_at(index)

    def kinds(self) -> list[tuple[Any, Any]]:
        if self._items is not None:
            return super().kinds()
        kinds: list[tuple[Any, Any]] = []
        append, decode, fallback = kinds.append, _decode_kind, super().kind_at
        for index, source in enumerate(self._sources):
            if type(source) is bytes:
                try:
                    facts = decode(source).payload
                except msgspec.MsgspecError:
                    pass
                else:
                    append((facts.type, facts.call_id))
                    continue
            append(fallback(index))
        return kinds

    def input_texts(self, indexes: Sequence[int]) -> list[tuple[str, str]]:
        """``LazyHistory.input_texts``, read from the lines (no model built for them)."""
        texts: list[tuple[str, str]] = []
        sources = self._sources
        for index in indexes:
            source = sources[index]
            found = _line_texts(source) if type(source) is bytes else None
            texts.extend(found if found is not None else super().input_texts((index,)))
        return texts

    def to_json(self) -> list[dict[str, Any]]:
        """The items' JSON objects, without validating the ones not read yet."""
        items = self._items
        if items is None:
            return [item_json(source) for source in self._sources]
        return [
            item.to_json() if item is not None else item_json(source)
            for item, source in zip(items, self._sources, strict=True)
        ]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History):
            if self._sources == other._sources:
                return True
            return len(self) == len(other) and self._materialized() == other._materialized()
        if isinstance(other, tuple):
            return len(self) == len(other) and tuple(self._materialized()) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._materialized()))

    def __repr__(self) -> str:
        return f"History({tuple(self._materialized())!r})"
