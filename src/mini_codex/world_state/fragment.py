"""Model-visible fragments (spec/codex-worldstate.md §1.1, §4.1).

A fragment has a role (``user`` or ``developer``), a start/end marker pair (both empty for unmarked
fragments), a body and a "requires separate message" flag. Its text is start + body + end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

Role: TypeAlias = Literal["user", "developer"]


def markers_match(start: str, end: str, text: str) -> bool:
    """Prefix/suffix marker test, ASCII case-insensitive, after trimming.

    Empty markers never match.
    """
    if not start or not end:
        return False
    head = text.lstrip()
    tail = text.rstrip()
    return (
        len(head) >= len(start)
        and head[: len(start)].lower() == start.lower()
        and len(tail) >= len(end)
        and tail[len(tail) - len(end) :].lower() == end.lower()
    )


@dataclass(frozen=True, slots=True)
class Fragment:
    role: Role
    start_marker: str
    end_marker: str
    body: str
    separate_message: bool = False

    @property
    def text(self) -> str:
        return self.start_marker + self.body + self.end_marker

    def matches_text(self, text: str) -> bool:
        return markers_match(self.start_marker, self.end_marker, text)
