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

With remote environments (issue 26) the text is Codex's: with two or more environments whose
docs are not empty each is one part ``for `<id>` with root <cwd>\n\n<docs>`` (ids sorted), the
parts joined by a blank line after the user instructions, and no directory in the header; with
one it is the single-environment text above, for that environment's cwd
(``compose_environment_docs``). The snapshot then also lists the ids with docs
(``environments``; left out of the persisted form for a local-only session). When this step only
adds environments to the previous snapshot's (an executor finished starting), just the new parts
render, labeled, with no directory, as Codex's update does.

Legacy matcher: role user plus the AGENTS.md markers. No retained matcher.
What does not belong here: discovering and reading AGENTS.md files (``discovery/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final, assert_never

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from mini_codex.world_state.fragment import Fragment, markers_match
from mini_codex.world_state.section import Absent, Known, Previous, Section, Unknown
from mini_codex.world_state.sections._text import load_prompt

__all__ = [
    "AGENTS_MD_END",
    "AGENTS_MD_START",
    "PROJECT_DOC_SEPARATOR",
    "AgentsMdSection",
    "AgentsMdSnapshot",
    "EnvironmentDocs",
    "compose_environment_docs",
    "user_instructions_fragment",
]

PROJECT_DOC_SEPARATOR: Final = "\n\n--- project-doc ---\n\n"
EnvironmentDocs = tuple[str, str, str]
"""``(environment id, cwd, project docs)`` of one environment."""

AGENTS_MD_START: Final = "# AGENTS.md instructions"
AGENTS_MD_END: Final = "</INSTRUCTIONS>"


class AgentsMdSnapshot(BaseModel):
    """What the model was told: the instructions text and the directory they are for."""

    model_config = ConfigDict(frozen=True)

    directory: str | None = None
    """The directory the instructions apply to, when known (only stored with ``text``)."""
    text: str | None = None
    """The instructions text; ``None`` when there are no instructions."""
    environments: tuple[str, ...] | None = None
    """With remote environments: the ids whose docs the text holds (None: local only)."""

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("environments") is None:
            data.pop("environments", None)
        return data


def _part(env_id: str, cwd: str, docs: str) -> str:
    return f"for `{env_id}` with root {cwd}\n\n{docs}"


def compose_environment_docs(
    base: str | None, docs: Sequence[EnvironmentDocs]
) -> tuple[str | None, str | None, tuple[EnvironmentDocs, ...]]:
    """``(directory, text, the environments with docs)`` for the ready environments' docs."""
    present = tuple(sorted((d for d in docs if d[2].strip()), key=lambda d: d[0]))
    base = base if base and base.strip() else None
    if len(present) >= 2:
        parts = [p for p in [base, *(_part(*d) for d in present)] if p is not None]
        return None, "\n\n".join(parts), present
    if len(present) == 1:
        _env_id, cwd, text = present[0]
        return cwd, (base + PROJECT_DOC_SEPARATOR + text if base else text), present
    return None, base, present


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

    def __init__(
        self,
        text: str | None,
        directory: str | None = None,
        *,
        environments: Sequence[EnvironmentDocs] | None = None,
    ) -> None:
        self.text = text or None
        """The instructions to show; an empty string counts as no instructions."""
        self.directory = directory if self.text is not None else None
        """The directory the instructions are for (dropped when there is no text)."""
        self.parts = tuple(environments) if environments is not None else None
        """With remote environments: each one's docs (``compose_environment_docs``)."""

    def snapshot(self) -> AgentsMdSnapshot:
        ids = tuple(sorted(d[0] for d in self.parts)) if self.parts is not None else None
        return AgentsMdSnapshot(directory=self.directory, text=self.text, environments=ids)

    def _added_parts(self, before: AgentsMdSnapshot) -> Fragment | None:
        """Only new environments since ``before`` (Codex's update), else None."""
        if before.environments is None or not self.parts:
            return None
        known = set(before.environments)
        now = {d[0] for d in self.parts}
        if not known < now:
            return None
        added = sorted((d for d in self.parts if d[0] not in known), key=lambda d: d[0])
        return user_instructions_fragment("\n\n".join(_part(*d) for d in added))

    def render_diff(self, previous: Previous[AgentsMdSnapshot]) -> Fragment | None:
        match previous:
            case Known(snapshot=snapshot):
                if snapshot == self.snapshot():
                    return None
                update = self._added_parts(snapshot)
                if update is not None:
                    return update
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
