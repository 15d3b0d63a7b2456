"""Request bodies as bytes, serialized once per history item (issue 13).

The SDK's ``create`` methods walk every parameter through their typed transform on every request,
so a long session pays for its whole history at each step. The providers instead build the body
bytes here and send them through ``models.http_post``, which does what the SDK's request path did
(headers, retries, error classes, SSE decoding) without importing it.

The bytes are exactly the ones the SDK would send for the same keyword arguments: keys in the
order of its ``create`` body (``RESPONSES_KEY_ORDER`` / ``CHAT_KEY_ORDER``), compact separators,
UTF-8 without ``\\u`` escapes of non-ASCII (``json.dumps(ensure_ascii=False, separators=(",",
":"), allow_nan=False)``, which is what the SDK uses). orjson writes the same bytes for strings,
integers, booleans and nulls; a value holding a float or anything orjson refuses is written by the
standard encoder instead (floats print differently), so the bytes never differ.

``ItemBytesCache`` keeps the bytes of the items sent last time, by identity (history items are
frozen): a request re-encodes only items it has not seen (new ones, and the synthetic outputs
of ``normalize_history``), so its cost does not grow with the history beyond a pointer walk.
``object_pieces`` / ``EncodedArray`` keep the body as pieces and ``ChunkedBody`` sends them in
~1 MB chunks with the exact ``Content-Length``: the body is never joined into one buffer.
"""

from __future__ import annotations

import json
import operator
from bisect import bisect_left
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from itertools import accumulate, chain, repeat
from typing import Any, Generic, TypeVar

import orjson

from mini_codex.context.lazy import LazyHistory, PromptHistory, PromptItems

RESPONSES_KEY_ORDER = (
    "model",
    "stream",
    "include",
    "input",
    "instructions",
    "parallel_tool_calls",
    "reasoning",
    "store",
    "text",
    "tool_choice",
    "tools",
)
"""Key order of the SDK's ``responses.create`` body (for the keys mini-codex sends)."""

CHAT_KEY_ORDER = (
    "model",
    "stream",
    "messages",
    "parallel_tool_calls",
    "response_format",
    "stream_options",
    "tools",
)
"""Key order of the SDK's ``chat.completions.create`` body (for the keys mini-codex sends)."""

_STD_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_float(v) for v in value)
    return False


def compact(data: bytes) -> bytes:
    """A copy of ``data`` in a buffer of its own size: orjson (3.13) returns small outputs in
    a 4 KiB allocation, which adds up to hundreds of MB when every history item is kept."""
    return memoryview(data).tobytes() if len(data) < 4096 else data


def dumps(value: Any) -> bytes:
    """``value`` as the SDK would encode it (orjson where that gives the same bytes)."""
    if not _has_float(value):
        try:
            return compact(orjson.dumps(value))
        except (TypeError, orjson.JSONEncodeError):
            pass
    return _STD_ENCODER.encode(value).encode()


class EncodedArray:
    """A JSON array of already encoded elements (``None`` elements are left out), kept as
    pieces so that the body is copied once, in ``join_object`` (or never: ``ChunkedBody``)."""

    __slots__ = ("pieces",)

    def __init__(self, encoded: Sequence[bytes | None], pieces: list[bytes] | None = None) -> None:
        if pieces is None:
            present = [part for part in encoded if part is not None]
            pieces = list(chain.from_iterable(zip(repeat(b","), present)))
            if pieces:
                pieces[0] = b"["
            else:
                pieces = [b"["]
            pieces.append(b"]")
        self.pieces = pieces


class ArrayChunks:
    """The pieces of the JSON array of a growing list of encoded items, with the items of a
    prefix joined into chunks of about ``CHUNK_BYTES`` that later requests reuse: a request
    then touches only the items it has not seen (the history only grows between steps). The
    pieces of the items after the last chunk (the ``run``) are kept too, and extended.

    ``pieces(encoded, stable)``: ``stable`` is how many leading items are the same as in the
    previous call (``ItemCache.last_prefix``); chunks and run reaching past it are rebuilt."""

    CHUNK_BYTES = 1 << 20

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._covered = 0
        """Items (present or not) inside ``_chunks``."""
        self._started = False
        """Whether the chunks hold an element (the next one needs a leading comma)."""
        self._run: list[bytes] = []
        """The pieces (elements and commas) of the items from ``_covered`` to ``_run_end``."""
        self._run_end = 0
        self._run_size = 0

    def pieces(self, encoded: Sequence[bytes | None], stable: int) -> list[bytes]:
        if stable < self._covered or len(encoded) < self._covered:
            self._chunks, self._covered, self._started = [], 0, False
            self._run, self._run_end, self._run_size = [], 0, 0
        elif stable < self._run_end or len(encoded) < self._run_end:
            self._run, self._run_end, self._run_size = [], self._covered, 0
        run, size = self._run, self._run_size
        started = self._started or bool(run)
        for index in range(self._run_end, len(encoded)):
            part = encoded[index]
            if part is None:
                continue
            if started:
                run.append(b",")
            run.append(part)
            started = True
            size += len(part) + 1
            if size >= self.CHUNK_BYTES:
                self._chunks.append(b"".join(run))
                self._covered, self._started = index + 1, True
                run, size = [], 0
        self._run, self._run_end, self._run_size = run, max(len(encoded), self._covered), size
        return [b"[", *self._chunks, *run, b"]"]


def object_pieces(fields: Mapping[str, Any], order: Sequence[str]) -> list[bytes]:
    """The pieces of a JSON object of ``fields`` in ``order`` (joined: the object's bytes); a
    ``bytes`` value is taken as already encoded, an ``EncodedArray`` as encoded elements."""
    unknown = set(fields) - set(order)
    if unknown:
        raise ValueError(f"request body keys without a known position: {sorted(unknown)}")
    pieces: list[bytes] = []
    for key in order:
        if key not in fields:
            continue
        value = fields[key]
        pieces.append(b"," if pieces else b"{")
        pieces.append(dumps(key) + b":")
        if isinstance(value, EncodedArray):
            pieces.extend(value.pieces)
        else:
            pieces.append(value if isinstance(value, bytes) else dumps(value))
    pieces.append(b"}" if pieces else b"{}")
    return pieces


def join_object(fields: Mapping[str, Any], order: Sequence[str]) -> bytes:
    """``object_pieces`` joined: the JSON object's bytes."""
    return b"".join(object_pieces(fields, order))


class ChunkedBody:
    """A request body kept as pieces (the cached bytes of history items are not copied into
    one big buffer): httpx iterates it (``__aiter__``, from the start every time) in chunks of
    about ``CHUNK_BYTES``, ``http_post`` (and the SDK) rewinds it before a retry (``seek(0)``:
    the same bytes again), and it is sent with its exact ``Content-Length`` (``length``), so
    the request is framed as a bytes body would be."""

    CHUNK_BYTES = 1 << 20

    def __init__(self, pieces: Sequence[bytes]) -> None:
        self._pieces = pieces
        self._ends = list(accumulate(map(len, pieces)))
        """Byte offset after each piece (found with ``bisect``: no Python loop per piece)."""
        self.length = self._ends[-1] if self._ends else 0
        self._next = 0
        self._offset = 0

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._offset

    def seek(self, offset: int, whence: int = 0) -> int:
        if offset != 0 or whence != 0:
            raise ValueError("a chunked request body can only be rewound to its start")
        self._next = self._offset = 0
        return 0

    def read(self, size: int = -1) -> bytes:
        """The next chunk (``size`` is a hint; b"" at the end)."""
        start = self._next
        if start >= len(self._pieces):
            return b""
        # The pieces up to the first one that ends at or past CHUNK_BYTES from here.
        stop = bisect_left(self._ends, self._offset + self.CHUNK_BYTES, lo=start) + 1
        stop = min(stop, len(self._pieces))
        self._next = stop
        self._offset = self._ends[stop - 1]
        if stop - start == 1:
            return self._pieces[start]
        return b"".join(self._pieces[start:stop])

    def __aiter__(self) -> AsyncIterator[bytes]:
        # httpx iterates the body once per send (a redirect sends it again): from the start.
        self.seek(0)
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        while chunk := self.read():
            yield chunk


def join_array(encoded: Sequence[bytes | None]) -> bytes:
    """A JSON array of already encoded elements (``None`` elements are left out)."""
    return b"".join(EncodedArray(encoded).pieces)


_Item = TypeVar("_Item")
_Value = TypeVar("_Value")


class ItemCache(Generic[_Item, _Value]):
    """A value computed once per item (its encoded bytes, its token count), reused by identity.

    ``compute(item)`` gives the value of an item the cache has not seen. Items must be
    immutable (history items are frozen pydantic models). Only the entries of the latest call
    are kept, so the cache holds no more than the history it mirrors.

    A ``PromptHistory`` of the lineage of the previous call (the same history, only appended
    to since) is not compared item by item: its new items' values are appended to the previous
    ones, so a step of a long history costs nothing per old item."""

    def __init__(self, compute: Callable[[_Item], _Value]) -> None:
        self._compute = compute
        self._items: Sequence[_Item] = ()
        self._values: list[_Value] = []
        self._lineage: object = None
        """The ``PromptHistory.lineage`` of ``_items`` (None: not known)."""
        self.computed_count = 0
        """How many values were computed (not taken from the cache) so far; for tests."""
        self.last_prefix = 0
        """How many leading items of the last call were the very items of the call before."""

    def values(self, items: Sequence[_Item]) -> list[_Value]:
        """The value of every item of ``items``, in order (the cache's own list: read it, do
        not keep or change it)."""
        lineage = items.lineage if isinstance(items, PromptHistory) else None
        previous, values = self._items, self._values
        if lineage is not None and lineage is self._lineage and len(items) >= len(previous):
            prefix = len(previous)
            compute = self._compute
            for item in items[prefix:]:
                values.append(compute(item))
            self.computed_count += len(items) - prefix
            self.last_prefix, self._items = prefix, items
            return values
        # The common prefix by identity, at C speed: history only grows between steps.
        same = list(map(operator.is_, previous, items))
        prefix = same.index(False) if False in same else len(same)
        self.last_prefix = prefix
        result = values[:prefix]
        rest = items[prefix:]
        if rest:
            known = {id(item): values[i] for i, item in enumerate(previous[prefix:], prefix)}
            for item in rest:
                cached = known.get(id(item), _MISSING)
                if cached is _MISSING:
                    self.computed_count += 1
                    result.append(self._compute(item))
                else:
                    result.append(cached)
        self._items = items if isinstance(items, tuple) else list(items)
        self._values = result
        self._lineage = lineage
        return result

    def clear(self) -> None:
        self._items = ()
        self._values = []
        self._lineage = None


class ItemBytesCache(ItemCache[_Item, "bytes | None"]):
    """The encoded bytes of each history item (``None``: the item is not sent)."""

    def encode_all(self, items: Sequence[_Item]) -> list[bytes | None]:
        return self.values(items)

    @property
    def encoded_count(self) -> int:
        return self.computed_count


class InputPieces:
    """The pieces of a prompt's input array, for any input: a tuple of typed items, or a
    ``PromptItems`` whose history is still lazy (a resumed session).

    Typed items go through ``cache`` (bytes by identity) and ``ArrayChunks``. A lazy prefix is
    encoded once per prefix, straight into chunks of about ``ArrayChunks.CHUNK_BYTES`` (only
    the chunks are kept), from the items' rollout lines (``encode_lines``: :data:`LINE_BATCH`
    at a time, comma-joined; else ``encode_line``) or else their JSON (``encode_json``), all
    the bytes the cache gives for the built item; appended items go through the cache.
    """

    def __init__(
        self,
        encode_json: Callable[[dict[str, Any]], bytes | None],
        cache: ItemCache[Any, bytes | None],
        encode_line: Callable[[bytes], bytes | None] | None = None,
        encode_lines: Callable[[list[bytes]], bytes | None] | None = None,
    ) -> None:
        self._encode_json = encode_json
        self._encode_line, self._encode_lines = encode_line, encode_lines
        self._cache = cache
        self._chunks = ArrayChunks()
        self._prefix: LazyHistory | None = None
        self._prefix_chunks: list[bytes] = []
        self._prefix_started = False
        """Whether the prefix has an element (the tail's first one needs a comma)."""

    def pieces(self, items: Sequence[Any]) -> list[bytes]:
        cache = self._cache
        if not isinstance(items, PromptItems):
            if self._prefix is not None:  # the cache and chunks saw only a tail: start over
                self._forget_prefix()
            return self._chunks.pieces(cache.values(items), cache.last_prefix)
        if items.prefix is not self._prefix:
            self._forget_prefix()
            self._encode_prefix(items.prefix)
        tail = cache.values(items.tail)
        tail_pieces = self._chunks.pieces(tail, cache.last_prefix)[1:-1]
        if tail_pieces and self._prefix_started:
            tail_pieces.insert(0, b",")
        return [b"[", *self._prefix_chunks, *tail_pieces, b"]"]

    def _forget_prefix(self) -> None:
        self._cache.clear()
        self._chunks = ArrayChunks()
        self._prefix, self._prefix_chunks, self._prefix_started = None, [], False

    def _prefix_parts(self, prefix: LazyHistory) -> Iterator[bytes]:
        """``prefix``'s items encoded, in order (those not sent left out; a batch: one part)."""
        json_at, encode_json, line_at = prefix.json_at, self._encode_json, prefix.line_at
        encode_line, encode_lines = self._encode_line, self._encode_lines
        total = len(prefix)
        for start in range(0, total, LINE_BATCH):
            lines = [line_at(index) for index in range(start, min(start + LINE_BATCH, total))]
            if encode_lines is not None and None not in lines:
                joined = encode_lines(lines)  # type: ignore[arg-type]
                if joined is not None:
                    yield joined
                    continue
            for index, line in enumerate(lines, start):
                part = encode_line(line) if encode_line is not None and line is not None else None
                if part is None:
                    part = encode_json(json_at(index))
                if part is not None:
                    yield part

    def _encode_prefix(self, prefix: LazyHistory) -> None:
        limit = ArrayChunks.CHUNK_BYTES
        chunks: list[bytes] = []
        run: list[bytes] = []
        size = 0
        started = False
        for part in self._prefix_parts(prefix):
            if started:
                run.append(b",")
            run.append(part)
            started = True
            size += len(part) + 1
            if size >= limit:
                chunks.append(b"".join(run))
                run, size = [], 0
        if run:
            chunks.append(b"".join(run))
        self._prefix, self._prefix_chunks, self._prefix_started = prefix, chunks, started


_MISSING: Any = object()

LINE_BATCH = 512  # how many lines of a lazy prefix InputPieces hands to encode_lines at once


__all__ = [
    "CHAT_KEY_ORDER",
    "RESPONSES_KEY_ORDER",
    "ArrayChunks",
    "EncodedArray",
    "InputPieces",
    "ItemBytesCache",
    "ItemCache",
    "compact",
    "dumps",
    "join_array",
    "join_object",
    "object_pieces",
]
