"""Stream events as attribute views over their decoded JSON (issue 13).

The providers read each event's decoded JSON (``models.http_post``) instead of the SDK's typed
models: building those costs ~0.5 s on the first event of every process (pydantic builds the
schemas of all ~60 event classes of the discriminated union at once), importing the SDK ~0.3 s
more, and the providers only read a few fields.

``SseView`` answers the same attribute reads the providers make on the SDK's models:
``view.field`` (``AttributeError`` when absent, as for a field missing from a constructed
model, so ``getattr(view, field, default)`` works alike; dicts and lists of dicts come back as
views),
``view.model_extra`` (the whole JSON object: unknown fields such as ``end_turn`` are in it) and
``view.model_dump(...)`` (the JSON object as received, which is what ``model_dump(mode="json",
exclude_unset=True)`` of the constructed model gives).
"""

from __future__ import annotations

from typing import Any

_FLAT_ITEMS = frozenset({"function_call", "custom_tool_call"})
_TEXT_PART_KEYS = frozenset({"type", "text"})


def _text_parts(parts: Any, kinds: frozenset[str]) -> bool:
    return isinstance(parts, list) and all(
        isinstance(part, dict) and part.keys() == _TEXT_PART_KEYS and part["type"] in kinds
        for part in parts
    )


def _output_text_parts(parts: Any) -> bool:
    """Message parts that ``item_shape`` rebuilds as ``{type, text}`` whatever else they carry
    (``annotations``, ``logprobs``): what the SDK's model adds or reorders there is dropped."""
    return isinstance(parts, list) and all(
        isinstance(part, dict)
        and part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
        for part in parts
    )


def sdk_item_json(data: dict[str, Any]) -> dict[str, Any]:
    """An output item's JSON as the SDK's model would dump it (``model_dump(mode="json",
    exclude_unset=True)``), so history items (and so the next request's bytes and the rollout)
    are the same on both paths.

    The common items are answered directly: calls are flat, and the parts of messages and
    reasoning items are plain ``{type, text}`` parts, which the SDK's part models dump as
    ``{text, type}`` (fields in declaration order). Anything else goes through the SDK's model
    (built on first use).
    """
    kind = data.get("type")
    if kind in _FLAT_ITEMS:
        return data
    if kind == "message" and _output_text_parts(data.get("content")):
        return data  # output_text parts are rebuilt by ``item_shape`` anyway
    if (
        kind == "reasoning"
        and _text_parts(data.get("summary") or [], frozenset({"summary_text"}))
        and _text_parts(data.get("content") or [], frozenset({"reasoning_text"}))
    ):
        ordered = dict(data)
        for key in ("summary", "content"):
            if data.get(key):
                ordered[key] = [{"text": p.get("text"), "type": p["type"]} for p in data[key]]
        return ordered
    from openai._models import construct_type
    from openai.types.responses import ResponseOutputItem

    model = construct_type(type_=ResponseOutputItem, value=data)
    dumped = (
        model.model_dump(mode="json", exclude_unset=True) if hasattr(model, "model_dump") else model
    )
    return dumped if isinstance(dumped, dict) else data


def view(value: Any) -> Any:
    """``value`` with JSON objects (also inside lists) wrapped as ``SseView``."""
    if isinstance(value, dict):
        return SseView(value)
    if isinstance(value, list):
        return [view(element) for element in value]
    return value


class SseView:
    """Read-only attribute access to one decoded JSON object of a stream."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        # A missing key raises, as a field missing from a constructed SDK model does, so
        # ``getattr(event, name, default)`` gives the default on both paths.
        try:
            return view(self._data[name])
        except KeyError:
            raise AttributeError(name) from None

    @property
    def model_extra(self) -> dict[str, Any]:
        return self._data

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self._data

    def __repr__(self) -> str:
        return f"SseView({self._data!r})"


__all__ = ["SseView", "view"]
