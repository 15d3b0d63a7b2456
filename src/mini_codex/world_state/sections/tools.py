"""The ``tools`` section: which tool namespaces the model can use (ours; cf. spec §2.1 ``tools``).

A namespace is a built-in tool group or an MCP server. The snapshot maps each namespace to the first
line of its description (trimmed, at most 250 characters); it is persisted only when non-empty.

* ``Known`` and equal → nothing;
* ``Absent`` / ``Unknown``: nothing when there are no namespaces, else the full
  "Tool namespaces available:" list;
* ``Known`` with changes → "Added tool namespaces:" (new namespaces and changed descriptions) and
  "Removed tool namespaces:" lists, plus "No tool namespaces remain." when none are left.

Role developer, markers ``<tool_namespaces>`` … ``</tool_namespaces>``. The whole rendered text,
markers included, is at most 4 KiB of UTF-8 *after* XML escaping: each list keeps the entries that
fit (in sorted order) and ends with "... N additional namespaces omitted." for the rest.
What does not belong here: the tool specs themselves (they go in the request's ``tools`` field).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Final, assert_never

from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import Absent, Known, Previous, Section, Unknown
from mini_codex.world_state.sections._text import xml_escape

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_RENDERED_BYTES",
    "TOOL_NAMESPACES_END",
    "TOOL_NAMESPACES_START",
    "ToolsSection",
    "first_description_line",
]

TOOL_NAMESPACES_START: Final = "<tool_namespaces>"
TOOL_NAMESPACES_END: Final = "</tool_namespaces>"

MAX_DESCRIPTION_CHARS: Final = 250
"""Stored descriptions are cut to this many characters (code points)."""
MAX_RENDERED_BYTES: Final = 4096
"""Upper bound of the rendered fragment text (markers + body), in UTF-8 bytes."""

_AVAILABLE: Final = "Tool namespaces available"
_ADDED: Final = "Added tool namespaces"
_REMOVED: Final = "Removed tool namespaces"
_NONE_REMAIN: Final = "No tool namespaces remain.\n"
_OMITTED_LINE_RESERVE: Final = 48
"""Bytes kept per list for its "... N additional namespaces omitted." line (N < 10**11)."""


def first_description_line(description: str) -> str:
    """The first non-blank line of ``description``, trimmed and cut to 250 characters."""
    stripped = description.strip()
    first = stripped.split("\n", 1)[0].strip()
    return first[:MAX_DESCRIPTION_CHARS]


class ToolsSection(Section[dict[str, str]]):
    """The tool namespaces available to the model, by name, with their descriptions."""

    ID: ClassVar[str] = "tools"
    snapshot_type: ClassVar[object] = dict[str, str]

    def __init__(self, namespaces: Mapping[str, str]) -> None:
        self.namespaces: dict[str, str] = {
            name: first_description_line(namespaces[name]) for name in sorted(namespaces)
        }
        """Namespace → first description line, in sorted name order."""

    def snapshot(self) -> dict[str, str]:
        return dict(self.namespaces)

    def should_persist(self) -> bool:
        return bool(self.namespaces)

    def render_diff(self, previous: Previous[dict[str, str]]) -> Fragment | None:
        groups: list[tuple[str, dict[str, str]]]
        match previous:
            case Known(snapshot=before):
                if before == self.namespaces:
                    return None
                added = {
                    name: description
                    for name, description in self.namespaces.items()
                    if before.get(name) != description
                }
                removed = {
                    name: before[name] for name in sorted(before) if name not in self.namespaces
                }
                groups = [(_ADDED, added), (_REMOVED, removed)]
                none_remain = not self.namespaces
            case Absent() | Unknown():
                if not self.namespaces:
                    return None
                groups = [(_AVAILABLE, self.namespaces)]
                none_remain = False
            case _:
                assert_never(previous)
        return Fragment(
            role="developer",
            start_marker=TOOL_NAMESPACES_START,
            end_marker=TOOL_NAMESPACES_END,
            body=_render_groups(groups, none_remain=none_remain),
        )


def _render_groups(groups: list[tuple[str, dict[str, str]]], *, none_remain: bool) -> str:
    """The body: non-empty lists of entries that fit the byte budget, omissions counted."""
    groups = [(label, entries) for label, entries in groups if entries]
    budget = MAX_RENDERED_BYTES - _utf8_len(TOOL_NAMESPACES_START) - _utf8_len(TOOL_NAMESPACES_END)
    fixed = 1 + sum(_utf8_len(label) + 2 + _OMITTED_LINE_RESERVE for label, _ in groups)
    if none_remain:
        fixed += _utf8_len(_NONE_REMAIN)
    remaining = max(budget - fixed, 0)
    parts = ["\n"]
    for label, entries in groups:
        parts.append(label + ":\n")
        omitted = 0
        for name in sorted(entries):
            entry = _render_entry(name, entries[name])
            size = _utf8_len(entry)
            if size <= remaining:
                remaining -= size
                parts.append(entry)
            else:
                omitted += 1
        if omitted:
            parts.append(f"... {omitted} additional namespaces omitted.\n")
    if none_remain:
        parts.append(_NONE_REMAIN)
    return "".join(parts)


def _render_entry(name: str, description: str) -> str:
    if description:
        return f"- {xml_escape(name)}: {xml_escape(description)}\n"
    return f"- {xml_escape(name)}\n"


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))
