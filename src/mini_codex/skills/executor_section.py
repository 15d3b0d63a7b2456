"""The executor ``skills`` section (issue 27 item 6): the skills of the ready remote environments.

Snapshot ``{body}`` (``skills.executor.render_executor_skills``; ``body`` left out when there are
none), as Codex's executor skills section has it. Role developer, markers
``<skills_instructions>`` … ``</skills_instructions>``:

* ``Known`` and equal → nothing;
* a body → ``"\\n" + body + "\\n"``;
* no body while the previous state had one (or is ``Unknown``) → Codex's
  "## Skills update / No selected-environment skills are currently available." (an environment
  failed or was removed); no body before either → nothing.

No legacy matcher: the ``host_skills`` catalog uses the same markers.
"""

from __future__ import annotations

from typing import ClassVar, Final

from pydantic import BaseModel, ConfigDict

from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import Absent, Known, Previous, Section

__all__ = ["SKILLS_UPDATE_GONE", "ExecutorSkillsSection", "ExecutorSkillsSnapshot"]

SKILLS_START: Final = "<skills_instructions>"
SKILLS_END: Final = "</skills_instructions>"
SKILLS_UPDATE_GONE: Final = (
    "## Skills update\nNo selected-environment skills are currently available."
)


class ExecutorSkillsSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    body: str | None = None


class ExecutorSkillsSection(Section[ExecutorSkillsSnapshot]):
    ID: ClassVar[str] = "skills"
    snapshot_type: ClassVar[object] = ExecutorSkillsSnapshot

    def __init__(self, body: str | None) -> None:
        self.body = body or None

    def snapshot(self) -> ExecutorSkillsSnapshot:
        return ExecutorSkillsSnapshot(body=self.body)

    def render_diff(self, previous: Previous[ExecutorSkillsSnapshot]) -> Fragment | None:
        if isinstance(previous, Known) and previous.snapshot == self.snapshot():
            return None
        if self.body is not None:
            text = self.body
        else:
            had = not isinstance(previous, Absent) and (
                not isinstance(previous, Known) or previous.snapshot.body is not None
            )
            if not had:
                return None
            text = SKILLS_UPDATE_GONE
        return Fragment(
            role="developer", start_marker=SKILLS_START, end_marker=SKILLS_END, body=f"\n{text}\n"
        )
