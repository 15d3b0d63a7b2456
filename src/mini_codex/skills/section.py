"""The ``host_skills`` world-state section: the catalog as a diffable snapshot.

The snapshot is ``{"body": <catalog body>}`` (null, so no entry, when no skill is listed); the
world state places the section just before ``permissions`` (spec/codex-worldstate.md §1.4). It
renders the whole ``<skills_instructions>`` developer fragment when it is new or the set (or its
budgeted rendering) changed, nothing when unchanged, and a short "Skills update" fragment when
every skill is gone. A retained-fragment matcher makes a turn start re-render the catalog once
history no longer holds it (compaction); the legacy matcher recognises Codex's envelope.
"""

from __future__ import annotations

from mini_codex.jsonmerge import Json
from mini_codex.skills.catalog import RenderedCatalog
from mini_codex.world_state.extensions import ExtensionSection
from mini_codex.world_state.fragment import Fragment, markers_match
from mini_codex.world_state.section import Known, Previous

__all__ = ["HOST_SKILLS_ID", "SKILLS_END", "SKILLS_START", "host_skills_section"]

HOST_SKILLS_ID = "host_skills"
SKILLS_START = "<skills_instructions>"
SKILLS_END = "</skills_instructions>"
NO_SKILLS_BODY = "\n## Skills update\nNo skills are available any more.\n"


def _is_catalog(role: str, text: str) -> bool:
    return role == "developer" and markers_match(SKILLS_START, SKILLS_END, text)


def host_skills_section(catalog: RenderedCatalog | None) -> ExtensionSection:
    body = catalog.body if catalog is not None else None
    snapshot: Json = {"body": body} if body is not None else None

    def render(previous: Previous[Json]) -> Fragment | None:
        if isinstance(previous, Known):
            if previous.snapshot == snapshot:
                return None
            if body is None:
                return Fragment("developer", SKILLS_START, SKILLS_END, NO_SKILLS_BODY)
        if body is None:
            return None
        return Fragment("developer", SKILLS_START, SKILLS_END, body)

    def retained(role: str, text: str) -> bool:
        return _is_catalog(role, text) and (body is None or body.strip() in text)

    return ExtensionSection(
        id=HOST_SKILLS_ID,
        snapshot=snapshot,
        render=render,
        legacy_matcher=_is_catalog,
        retained_matcher=retained,
    )
