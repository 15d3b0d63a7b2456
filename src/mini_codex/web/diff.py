"""The world-state diff between two steps, as rows the page colours (pure).

A row is ``{"op": "add" | "remove" | "change", "path": [section, key, ...], "before", "after"}``.
Objects are compared key by key (so one changed file of a workspace is one row); anything else
(strings, numbers, arrays) is compared whole. ``None`` for a whole state means "no world state".
"""

from __future__ import annotations

from typing import Any

__all__ = ["diff_states"]


def diff_states(before: Any, after: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    _diff(before if before is not None else {}, after if after is not None else {}, [], rows)
    return rows


def _diff(before: Any, after: Any, path: list[str], rows: list[dict[str, Any]]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                rows.append({"op": "remove", "path": [*path, key], "before": before[key]})
        for key, value in after.items():
            if key not in before:
                rows.append({"op": "add", "path": [*path, key], "after": value})
            elif before[key] != value:
                _diff(before[key], value, [*path, key], rows)
        return
    if before != after:
        rows.append({"op": "change", "path": path, "before": before, "after": after})
