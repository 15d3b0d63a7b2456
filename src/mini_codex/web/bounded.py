"""Bounded JSON documents (pure): long strings cut, untrusted numbers checked.

Rollouts are untrusted input (they come from other machines, Codex homes, bug reports): a value
the page shows as a number is a number here, and no string in a document is longer than
:data:`MAX_TEXT` characters. A cut item or tool call says so (``text_cut``, ``arguments_cut``,
``output_cut``: ``{"chars": FULL_LENGTH, "offset": LINE_OFFSET}``), and the page fetches the
whole line from ``/api/sessions/ID/lines/OFFSET`` when asked (one click).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_TEXT", "cut_document", "token_usage"]

MAX_TEXT = 64 * 1024
"""Characters of one string kept in a document."""
_CUT_FIELDS = {"text": "offset", "arguments": "offset", "output": "output_offset"}


def cut_document(document: dict[str, Any], limit: int = MAX_TEXT) -> dict[str, Any]:
    """``document`` with each string longer than ``limit`` cut (a new object; the input kept)."""
    cut: dict[str, Any] = _cut_value(document, limit)
    return cut


def _cut_value(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return _cut(value, limit)
    if isinstance(value, list):
        return [_cut_value(item, limit) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[key] = _cut_value(item, limit)
            if isinstance(item, str) and len(item) > limit and key in _CUT_FIELDS:
                offset = value.get(_CUT_FIELDS[key])
                if isinstance(offset, int) and not isinstance(offset, bool):
                    out[f"{key}_cut"] = {"chars": len(item), "offset": offset}
        return out
    return value


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def token_usage(value: Any) -> dict[str, int] | None:
    """A ``token_count`` event's usage with only its integer fields (None: not an object)."""
    if not isinstance(value, dict):
        return None
    return {
        str(key): count
        for key, count in value.items()
        if isinstance(count, int) and not isinstance(count, bool) and abs(count) < 2**53
    }
