"""The session's skills: discovery once per turn, the rendered catalog, warnings once each.

A :class:`SkillsService` is owned by a session (``StepServices.skills``). The first step capture
of a turn discovers skills (cheap when nothing changed: parsed files are cached by stat), renders
the budgeted catalog and builds the ``host_skills`` section; later steps of the turn reuse it, as
Codex takes its skills snapshot per turn. A bad ``SKILL.md`` is reported once per session (per
path and reason), not once per turn. The rendered catalog is reused while the skills and the
budget are unchanged, so an unchanged set costs no rendering.
"""

from __future__ import annotations

import threading
from pathlib import Path

import msgspec

from mini_codex.skills.catalog import CatalogBudget, RenderedCatalog, render_catalog
from mini_codex.skills.discovery import SkillDiscovery, SkillRootsConfig, skill_roots
from mini_codex.skills.model import SkillLoadOutcome, SkillSpec
from mini_codex.skills.section import host_skills_section
from mini_codex.world_state.extensions import ExtensionSection

__all__ = ["SkillsService", "StepSkills"]


class StepSkills(msgspec.Struct, frozen=True):
    """What a step knows about skills."""

    outcome: SkillLoadOutcome
    catalog: RenderedCatalog | None
    section: ExtensionSection | None
    """None while the session has never listed a skill (no section at all); once it has, the
    section stays, so that skills vanishing is told to the model."""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(skill.name for skill in self.outcome.skills)


class SkillsService(msgspec.Struct):
    roots: SkillRootsConfig
    discovery: SkillDiscovery = msgspec.field(default_factory=SkillDiscovery)
    _turn_id: str | None = None
    _current: StepSkills | None = None
    _render_key: tuple[tuple[SkillSpec, ...], tuple[str, ...], CatalogBudget] | None = None
    _reported: set[str] = msgspec.field(default_factory=set)
    _ever_listed: bool = False
    _lock: threading.Lock = msgspec.field(default_factory=threading.Lock)
    """Discovery runs in a worker thread (capture) and in the UI's thread (``$`` completion)."""

    def is_current(self, turn_id: str) -> bool:
        """Whether ``for_turn(…, turn_id, …)`` would answer from the turn's snapshot."""
        return self._current is not None and self._turn_id == turn_id

    def for_turn(
        self, cwd: Path, turn_id: str, budget: CatalogBudget
    ) -> tuple[StepSkills, list[str]]:
        """This turn's skills (discovered on the turn's first call) and new warnings."""
        if self._current is not None and self._turn_id == turn_id:
            return self._current, []
        return self.refresh(cwd, turn_id, budget)

    def refresh(
        self, cwd: Path, turn_id: str, budget: CatalogBudget
    ) -> tuple[StepSkills, list[str]]:
        with self._lock:
            outcome = self.discovery.load(skill_roots(self.roots, cwd))
        warnings: list[str] = []
        for message in [error.warning() for error in outcome.errors] + list(outcome.notes):
            if message not in self._reported:
                self._reported.add(message)
                warnings.append(message)
        key = (outcome.skills, outcome.roots, budget)
        if self._current is not None and key == self._render_key:
            current = StepSkills(outcome, self._current.catalog, self._current.section)
        else:
            catalog = render_catalog(outcome, budget)
            if catalog is not None and catalog.warning is not None:
                if catalog.warning not in self._reported:
                    self._reported.add(catalog.warning)
                    warnings.append(catalog.warning)
            self._ever_listed = self._ever_listed or catalog is not None
            section = host_skills_section(catalog) if self._ever_listed else None
            current = StepSkills(outcome, catalog, section)
            self._render_key = key
        self._turn_id, self._current = turn_id, current
        return current, warnings

    def mark_listed(self) -> None:
        """A resumed session whose baseline holds a catalog: skills vanishing is then told."""
        self._ever_listed = True

    def names(self, cwd: Path) -> tuple[str, ...]:
        """Skill names for completion, discovered now (cached; nothing is reported from here:
        the turn's capture reports problems)."""
        with self._lock:
            outcome = self.discovery.load(skill_roots(self.roots, cwd))
        return tuple(skill.name for skill in outcome.skills)

    @property
    def current(self) -> StepSkills | None:
        """The skills of the latest turn (the UI completes ``$`` names from it)."""
        return self._current
