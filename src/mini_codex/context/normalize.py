"""History normalization for prompts: every tool call answered, no orphan outputs.

What belongs here: pure functions that turn the stored history into a valid model input without
touching the stored items (upstream ``context_manager/normalize.rs``). A tool call left without
an output (the process was killed mid-command, the turn was interrupted) gets a synthetic
``aborted`` output right after it; an output whose call is gone (trimmed, compacted) is dropped.
The synthetic outputs exist only in the prompt: they are never written back to history or to the
rollout. What does not: truncation and compaction (their own modules), recording (``history.py``).

Pairing is by ``call_id`` and kind: a ``function_call`` is answered by a
``function_call_output``, a ``custom_tool_call`` by a ``custom_tool_call_output``. A
``local_shell_call`` item (kept as ``UnknownItem``, from rollouts of the Codex CLI) counts as a
function call: ``function_call_output`` answers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from mini_codex.context.lazy import LazyHistory, PatchedHistory
from mini_codex.protocol.items import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    ResponseItem,
    UnknownItem,
)

__all__ = [
    "ABORTED_OUTPUT",
    "PairingIndex",
    "normalize_history",
    "normalize_lazy",
    "normalize_lazy_tail",
    "paired_call_id",
]

ABORTED_OUTPUT = "aborted"
"""The output text synthesized for a tool call that never got an answer."""

_FUNCTION = "function"
_CUSTOM = "custom"
_CALL_KINDS: dict[type, str] = {
    FunctionCall: _FUNCTION,
    FunctionCallOutput: _FUNCTION,
    CustomToolCall: _CUSTOM,
    CustomToolCallOutput: _CUSTOM,
}


def _call_key(item: ResponseItem) -> tuple[str, str] | None:
    """(kind, call_id) if ``item`` is a tool call."""
    kind = type(item)
    if kind is FunctionCall or kind is CustomToolCall:
        return (_CALL_KINDS[kind], item.call_id)  # type: ignore[union-attr]
    if kind is UnknownItem and item.type == "local_shell_call":
        call_id = getattr(item, "call_id", None)
        if isinstance(call_id, str):
            return (_FUNCTION, call_id)
    return None


def _output_key(item: ResponseItem) -> tuple[str, str] | None:
    """(kind, call_id) if ``item`` is a tool output."""
    kind = type(item)
    if kind is FunctionCallOutput or kind is CustomToolCallOutput:
        return (_CALL_KINDS[kind], item.call_id)  # type: ignore[union-attr]
    return None


def paired_call_id(item: ResponseItem) -> tuple[str, str] | None:
    """The (kind, call_id) pairing key of a tool call or tool output, else ``None``.

    A call and the output that answers it have the same key.
    """
    return _call_key(item) or _output_key(item)


_JSON_CALLS = {"function_call": _FUNCTION, "custom_tool_call": _CUSTOM}
_JSON_OUTPUTS = {"function_call_output": _FUNCTION, "custom_tool_call_output": _CUSTOM}


def _aborted_output(kind: str, call_id: str) -> ResponseItem:
    if kind == _CUSTOM:
        return CustomToolCallOutput(call_id=call_id, output=ABORTED_OUTPUT)
    return FunctionCallOutput(call_id=call_id, output=ABORTED_OUTPUT)


def normalize_history(items: Sequence[ResponseItem]) -> list[ResponseItem]:
    """A new list in which every tool call has an output and every output has its call.

    Orphan calls get an ``aborted`` output inserted immediately after them; orphan outputs are
    dropped. Everything else keeps its order. ``items`` is not modified.
    """
    calls: set[tuple[str, str]] = set()
    outputs: set[tuple[str, str]] = set()
    for item in items:
        if (key := _call_key(item)) is not None:
            calls.add(key)
        elif (key := _output_key(item)) is not None:
            outputs.add(key)
    if calls == outputs:
        return list(items)
    return _patched(items, calls, outputs)


def _patched(
    items: Sequence[ResponseItem],
    calls: AbstractSet[tuple[str, str]],
    outputs: AbstractSet[tuple[str, str]],
) -> list[ResponseItem]:
    """``items`` with an ``aborted`` output after each call not in ``outputs`` and without the
    outputs not in ``calls`` (the keys of the whole history they belong to)."""
    normalized: list[ResponseItem] = []
    for item in items:
        if (key := _call_key(item)) is not None:
            normalized.append(item)
            if key not in outputs:
                normalized.append(_aborted_output(*key))
        elif (key := _output_key(item)) is None or key in calls:
            normalized.append(item)
    return normalized


def normalize_lazy(
    prefix: LazyHistory, tail: Sequence[ResponseItem], index: PairingIndex
) -> tuple[LazyHistory, list[ResponseItem], frozenset[tuple[str, str]]]:
    """``normalize_history(prefix + tail)`` as a still lazy prefix and a typed tail, ``index``
    being the pairing index of ``prefix + tail``: the same rule per item (an orphan call gets
    its ``aborted`` output right after it, an orphan output is left out), with the prefix's
    keys read from its ``kinds()`` (no item built). The prefix itself when it keeps all its
    items and gains none. Also the keys of the prefix's orphans: the prefix's part stays the
    same while they all stay unmatched (appending cannot make another prefix item an orphan)."""
    calls, outputs = index.calls, index.outputs
    order: list[int | ResponseItem] = []
    orphans: set[tuple[str, str]] = set()
    for position, (kind, call_id) in enumerate(prefix.kinds()):
        key = _json_call_key(kind, call_id)
        if key is not None:
            order.append(position)
            if key not in outputs:
                order.append(_aborted_output(*key))
                orphans.add(key)
        elif kind in _JSON_OUTPUTS and (answers := (_JSON_OUTPUTS[kind], call_id)) not in calls:
            orphans.add(answers)
        else:
            order.append(position)
    view = PatchedHistory(prefix, order) if orphans else prefix
    return view, normalize_lazy_tail(tail, index), frozenset(orphans)


def normalize_lazy_tail(tail: Sequence[ResponseItem], index: PairingIndex) -> list[ResponseItem]:
    """The tail part of :func:`normalize_lazy` (its prefix part depends only on which keys
    are unmatched: a caller may keep that view while they stay the same)."""
    return _patched(tail, index.calls, index.outputs)


def _json_call_key(kind: Any, call_id: Any) -> tuple[str, str] | None:
    """``_call_key`` of the item whose JSON has this ``type`` and ``call_id``."""
    if kind in _JSON_CALLS:
        return (_JSON_CALLS[kind], call_id)
    if kind == "local_shell_call" and isinstance(call_id, str):
        return (_FUNCTION, call_id)
    return None


class PairingIndex:
    """The call and output keys of a growing history, kept up to date on appends.

    ``balanced`` is true when every call has an output and every output its call: then
    ``normalize_history`` would return the items unchanged, so a long history is not walked
    again at every step (issue 13). Only appends can be indexed; rewrites build a new index.
    """

    def __init__(self, items: Sequence[ResponseItem] = ()) -> None:
        self._calls: set[tuple[str, str]] = set()
        self._outputs: set[tuple[str, str]] = set()
        self._unmatched: set[tuple[str, str]] = set()
        self.add(items)

    def add(self, items: Sequence[ResponseItem]) -> None:
        for item in items:
            if (key := _call_key(item)) is not None:
                self._note(key, self._calls, self._outputs)
            elif (key := _output_key(item)) is not None:
                self._note(key, self._outputs, self._calls)

    def _note(
        self, key: tuple[str, str], mine: set[tuple[str, str]], other: set[tuple[str, str]]
    ) -> None:
        if key in mine:
            return
        mine.add(key)
        if key in other:
            self._unmatched.discard(key)
        else:
            self._unmatched.add(key)

    @classmethod
    def of_kinds(cls, kinds: Sequence[tuple[Any, Any]]) -> PairingIndex:
        """The index of valid items given by the ``type`` and ``call_id`` of their JSON (a lazy
        history's ``kinds()``), with the keys ``_call_key`` / ``_output_key`` give for the
        typed items (a ``local_shell_call`` is an ``UnknownItem``: a call when its
        ``call_id`` is a string)."""
        index = cls()
        calls = {(_JSON_CALLS[kind], call_id) for kind, call_id in kinds if kind in _JSON_CALLS}
        calls.update(
            (_FUNCTION, call_id)
            for kind, call_id in kinds
            if kind == "local_shell_call" and isinstance(call_id, str)
        )
        outputs = {
            (_JSON_OUTPUTS[kind], call_id) for kind, call_id in kinds if kind in _JSON_OUTPUTS
        }
        index._calls, index._outputs, index._unmatched = calls, outputs, calls ^ outputs
        return index

    @property
    def balanced(self) -> bool:
        return not self._unmatched

    @property
    def calls(self) -> AbstractSet[tuple[str, str]]:
        """The keys of the calls (read only)."""
        return self._calls

    @property
    def outputs(self) -> AbstractSet[tuple[str, str]]:
        """The keys of the outputs (read only)."""
        return self._outputs

    @property
    def unmatched(self) -> AbstractSet[tuple[str, str]]:
        """The keys of the calls without an output and the outputs without a call (read only)."""
        return self._unmatched
