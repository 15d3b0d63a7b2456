"""The data of skills: scopes, roots, one parsed skill, and what one discovery found.

What belongs here: frozen value types shared by discovery, the catalog, mentions and plugins.
What does not: reading files (``discovery.py``), rendering (``catalog.py``).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

__all__ = [
    "DISCOVERY_ORDER",
    "SkillError",
    "SkillLoadOutcome",
    "SkillRoot",
    "SkillScope",
    "SkillSelection",
    "SkillSpec",
    "scope_rank",
]

SkillScope: TypeAlias = Literal["repo", "user", "system", "admin"]
"""Codex's scopes; mini-codex ships no system skills, but the rank keeps the slot."""


DISCOVERY_ORDER: tuple[SkillScope, ...] = ("repo", "user", "system", "admin")
"""Discovery priority (the root scan order, also the dedupe priority): repo first."""


def scope_rank(scope: SkillScope, order: tuple[SkillScope, ...] = DISCOVERY_ORDER) -> int:
    """``scope``'s place in ``order`` (every scope is in both orders, so this never fails)."""
    return order.index(scope)


class SkillRoot(msgspec.Struct, frozen=True):
    """A folder scanned for ``**/SKILL.md``."""

    path: str
    """Absolute path as configured (canonicalised when scanned)."""
    scope: SkillScope
    plugin: str | None = None
    """The plugin that contributes this root; its skills are named ``plugin:skill``."""


class SkillSpec(msgspec.Struct, frozen=True):
    """One valid skill (frontmatter parsed and checked)."""

    name: str
    """``name`` from the frontmatter (else the folder name), ``plugin:``-prefixed for plugins."""
    description: str
    path: str
    """Canonical absolute path of the ``SKILL.md``; the identity of the skill."""
    scope: SkillScope
    root: str
    """Canonical path of the root it was found under (the catalog's alias table)."""
    plugin: str | None = None
    allow_implicit: bool = True
    """False when ``agents/openai.yaml`` sets ``policy.allow_implicit_invocation: false``: the
    skill is not listed in the catalog, but a mention still injects it."""


class SkillError(msgspec.Struct, frozen=True):
    """A ``SKILL.md`` that is not a skill, and why (one warning per path)."""

    path: str
    message: str

    def warning(self) -> str:
        return f"failed to load skill {self.path}: {self.message}"


class SkillLoadOutcome(msgspec.Struct, frozen=True):
    """Everything one discovery found, sorted as Codex sorts it."""

    skills: tuple[SkillSpec, ...] = ()
    """Sorted by scope rank, name, path; deduplicated by canonical path."""
    roots: tuple[str, ...] = ()
    """Canonical roots that contributed a skill, in scan order."""
    errors: tuple[SkillError, ...] = ()
    notes: tuple[str, ...] = ()
    """Other things the scan skipped (a truncated root, an unreadable folder)."""
    scanned_roots: tuple[SkillRoot, ...] = msgspec.field(default=())
    """Every existing root that was scanned (the step's ready capability roots)."""

    def by_path(self, path: str) -> SkillSpec | None:
        for skill in self.skills:
            if skill.path == path:
                return skill
        return None


class SkillSelection(msgspec.Struct, frozen=True):
    """A structured skill input item: ``{"type": "skill", "name": ..., "path": ...}``."""

    path: str
    name: str | None = None
