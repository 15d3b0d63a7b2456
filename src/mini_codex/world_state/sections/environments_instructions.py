"""The ``environments_instructions`` section: Codex's generic guidance about execution environments.

Snapshot: a bool, whether the guidance is on (``[features] deferred_executor = true``, as in Codex
0.169, where it is also tied to ``include_environment_context``). It renders once, when it is on
and the previous state is ``Absent`` or a ``Known`` false: role developer, markers
``<environments_instructions>`` … ``</environments_instructions>``, body ``"\\n" +`` the text of
``prompts/environments_instructions.md`` (recorded from Codex 0.169:
``tests/fixtures/exec_server/codex_environments_instructions_request.json``) ``+ "\\n"``. An
``Unknown`` previous renders nothing (the guidance is still in history); its legacy and retained
matchers are role developer plus the markers, so a history that lost the fragment renders it
again. The runtime adds it only when it is on, so a session without the feature is unchanged.
"""

from __future__ import annotations

from typing import ClassVar, Final

from mini_codex.world_state.fragment import Fragment, markers_match
from mini_codex.world_state.section import Known, Previous, Section, Unknown
from mini_codex.world_state.sections._text import load_prompt

__all__ = [
    "ENVIRONMENTS_INSTRUCTIONS_END",
    "ENVIRONMENTS_INSTRUCTIONS_START",
    "EnvironmentsInstructionsSection",
]

ENVIRONMENTS_INSTRUCTIONS_START: Final = "<environments_instructions>"
ENVIRONMENTS_INSTRUCTIONS_END: Final = "</environments_instructions>"


class EnvironmentsInstructionsSection(Section[bool]):
    ID: ClassVar[str] = "environments_instructions"
    snapshot_type: ClassVar[object] = bool

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def snapshot(self) -> bool:
        return self.enabled

    def render_diff(self, previous: Previous[bool]) -> Fragment | None:
        if not self.enabled or isinstance(previous, Unknown):
            return None
        if isinstance(previous, Known) and previous.snapshot:
            return None
        return Fragment(
            role="developer",
            start_marker=ENVIRONMENTS_INSTRUCTIONS_START,
            end_marker=ENVIRONMENTS_INSTRUCTIONS_END,
            body="\n" + load_prompt("environments_instructions") + "\n",
        )

    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        return role == "developer" and markers_match(
            ENVIRONMENTS_INSTRUCTIONS_START, ENVIRONMENTS_INSTRUCTIONS_END, text
        )

    @classmethod
    def has_retained_fragment_matcher(cls) -> bool:
        return True

    @classmethod
    def matches_retained_fragment(cls, role: str, text: str) -> bool:
        return cls.matches_legacy_fragment(role, text)
