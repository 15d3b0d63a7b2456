"""The ``capture_notes`` section: what a step capture skipped or could not finish (ours).

The model controls the workspace, so a step capture may meet an AGENTS.md that is a FIFO, a
``.gitignore`` of 20 MB, an unreadable directory, or a file-system walk that does not finish in
time. The capture never stalls and never fails for that; it skips what it cannot read and tells the
model here, so the model knows the instructions or the file listing it sees are incomplete.

Snapshot: the notes, in capture order (a tuple of strings). An empty snapshot is not persisted
(``should_persist`` is false), so sessions without notes record exactly what they did before this
section existed. Rendering (role user, markers ``<capture_notes>`` … ``</capture_notes>``): the
notes (at most :data:`MAX_NOTES` of them, then "... and N more") whenever they differ from the
previous state; nothing when there are none or they are unchanged.

Legacy matcher: role user plus the markers. What does not belong here: producing the notes
(``runtime/capture.py`` and ``discovery/``).
"""

from __future__ import annotations

from typing import ClassVar, Final, assert_never

from mini_codex.world_state.fragment import Fragment, markers_match
from mini_codex.world_state.section import Absent, Known, Previous, Section, Unknown

__all__ = ["CAPTURE_NOTES_END", "CAPTURE_NOTES_START", "MAX_NOTES", "CaptureNotesSection"]

CAPTURE_NOTES_START: Final = "<capture_notes>"
CAPTURE_NOTES_END: Final = "</capture_notes>"
MAX_NOTES: Final = 20
HEADER: Final = (
    "Parts of the workspace were skipped or could not be read for this request "
    "(the instructions and file listing you see may be incomplete):"
)


class CaptureNotesSection(Section[tuple[str, ...]]):
    """Notes about a step capture (see the module docstring)."""

    ID: ClassVar[str] = "capture_notes"
    snapshot_type: ClassVar[object] = tuple[str, ...]

    def __init__(self, notes: tuple[str, ...] = ()) -> None:
        self.notes = tuple(notes)

    def snapshot(self) -> tuple[str, ...]:
        return self.notes

    def should_persist(self) -> bool:
        return bool(self.notes)

    def render_diff(self, previous: Previous[tuple[str, ...]]) -> Fragment | None:
        if not self.notes:
            return None
        match previous:
            case Absent() | Unknown():
                return self._fragment()
            case Known(snapshot=before):
                return None if tuple(before) == self.notes else self._fragment()
            case _:
                assert_never(previous)

    def _fragment(self) -> Fragment:
        shown = self.notes[:MAX_NOTES]
        lines = [HEADER, *(f"- {note}" for note in shown)]
        if len(self.notes) > len(shown):
            lines.append(f"... and {len(self.notes) - len(shown)} more")
        return Fragment(
            role="user",
            start_marker=CAPTURE_NOTES_START,
            end_marker=CAPTURE_NOTES_END,
            body="\n" + "\n".join(lines) + "\n",
        )

    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        return role == "user" and markers_match(CAPTURE_NOTES_START, CAPTURE_NOTES_END, text)
