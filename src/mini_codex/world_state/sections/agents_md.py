"""The ``agents_md`` section: the loaded AGENTS.md instructions (spec §2.1 row ``agents_md``).

Snapshot ``{directory?, text?}``: both are omitted when there are no instructions, so the empty
state is ``{}``. The rendering is the UserInstructions fragment (role user, markers
``# AGENTS.md instructions`` … ``</INSTRUCTIONS>``, body ``" for <dir>"`` when the directory is
known, then ``"\\n\\n<INSTRUCTIONS>\\n" + text + "\\n"``):

* ``Known`` and equal → nothing;
* the previous state may contain instructions (``Known`` with text, or ``Unknown``) → the current
  text prefixed by the "replace all previously provided" notice and a blank line, or the removal
  notice when there are no instructions now;
* otherwise (``Absent``, or ``Known`` without text) → the plain instructions, or nothing.

Legacy matcher: role user plus the AGENTS.md markers. No retained matcher.
What does not belong here: discovering and reading AGENTS.md files (``discovery/``).
"""

from __future__ import annotations

from typing import ClassVar, Final, assert_never

from pydantic import BaseModel, ConfigDict

from mini_codex.world_state.fragment import Fragment, markers_match
from mini_codex.world_state.section import Absent, Known, Previous, Section, Unknown
from mini_codex.world_state.sections._text import load_prompt

__all__ = [
    "AGENTS_MD_END",
    "AGENTS_MD_START",
    "AgentsMdSection",
    "AgentsMdSnapshot",
    "user_instructions_fragment",
]

AGENTS_MD_START: Final = "# AGENTS.md instructions"
AGENTS_MD_END: Final = "</INSTRUCTIONS>"


class AgentsMdSnapshot(BaseModel):
    """What the model was told: the instructions text and the directory they are for."""

    model_config = ConfigDict(frozen=True)

    directory: str | None = None
    """The directory the instructions apply to, when known (only stored with ``text``)."""
    text: str | None = None
    """The instructions text; ``None`` when there are no instructions."""


def user_instructions_fragment(text: str, directory: str | None = None) -> Fragment:
    """The UserInstructions fragment for ``text`` (optionally attributed to ``directory``)."""
    header = f" for {directory}" if directory else ""
    return Fragment(
        role="user",
        start_marker=AGENTS_MD_START,
        end_marker=AGENTS_MD_END,
        body=f"{header}\n\n<INSTRUCTIONS>\n{text}\n",
    )


class AgentsMdSection(Section[AgentsMdSnapshot]):
    """The current AGENTS.md instructions (``text=None`` or empty: there are none)."""

    ID: ClassVar[str] = "agents_md"
    snapshot_type: ClassVar[object] = AgentsMdSnapshot

    def __init__(self, text: str | None, directory: str | None = None) -> None:
        self.text = text or None
        """The instructions to show; an empty string counts as no instructions."""
        self.directory = directory if self.text is not None else None
        """The directory the instructions are for (dropped when there is no text)."""

    def snapshot(self) -> AgentsMdSnapshot:
        return AgentsMdSnapshot(directory=self.directory, text=self.text)

    def render_diff(self, previous: Previous[AgentsMdSnapshot]) -> Fragment | None:
        match previous:
            case Known(snapshot=snapshot):
                if snapshot == self.snapshot():
                    return None
                may_contain_instructions = snapshot.text is not None
            case Unknown():
                may_contain_instructions = True
            case Absent():
                may_contain_instructions = False
            case _:
                assert_never(previous)
        if self.text is None:
            if not may_contain_instructions:
                return None
            return user_instructions_fragment(load_prompt("agents_md_removed"))
        text = self.text
        if may_contain_instructions:
            text = load_prompt("agents_md_replace_notice") + "\n\n" + text
        return user_instructions_fragment(text, self.directory)

    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        return role == "user" and markers_match(AGENTS_MD_START, AGENTS_MD_END, text)
