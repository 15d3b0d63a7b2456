"""Skills and plugins: ``SKILL.md`` folders as Codex presents them (spec/codex-surfaces.md §2–§3).

* ``discovery``: the roots and their order, the bounded, hostile-file-safe scan, the parse cache;
* ``catalog``: the budgeted ``<skills_instructions>`` rendering; ``section``: ``host_skills``;
* ``mentions``: ``$name`` / structured selections → ``<skill>`` user messages;
* ``plugins``: ``.codex-plugin/plugin.json`` bundles (skills, MCP servers, hooks);
* ``service``: what a session keeps (discovery per turn, warnings once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex._lazy import lazy_exports

if TYPE_CHECKING:
    from mini_codex.skills.catalog import (
        CatalogBudget,
        RenderedCatalog,
        default_budget,
        render_catalog,
    )
    from mini_codex.skills.discovery import SkillDiscovery, SkillRootsConfig, skill_roots
    from mini_codex.skills.mentions import build_skill_injections, extract_mentions, select_skills
    from mini_codex.skills.model import (
        SkillError,
        SkillLoadOutcome,
        SkillRoot,
        SkillScope,
        SkillSelection,
        SkillSpec,
    )
    from mini_codex.skills.plugins import LoadedPlugin, apply_plugins, load_plugin, load_plugins
    from mini_codex.skills.section import HOST_SKILLS_ID, host_skills_section
    from mini_codex.skills.service import SkillsService, StepSkills

__all__ = [
    "HOST_SKILLS_ID",
    "CatalogBudget",
    "LoadedPlugin",
    "RenderedCatalog",
    "SkillDiscovery",
    "SkillError",
    "SkillLoadOutcome",
    "SkillRoot",
    "SkillRootsConfig",
    "SkillScope",
    "SkillSelection",
    "SkillSpec",
    "SkillsService",
    "StepSkills",
    "apply_plugins",
    "build_skill_injections",
    "default_budget",
    "extract_mentions",
    "host_skills_section",
    "load_plugin",
    "load_plugins",
    "render_catalog",
    "select_skills",
    "skill_roots",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "CatalogBudget": "mini_codex.skills.catalog",
        "RenderedCatalog": "mini_codex.skills.catalog",
        "default_budget": "mini_codex.skills.catalog",
        "render_catalog": "mini_codex.skills.catalog",
        "SkillDiscovery": "mini_codex.skills.discovery",
        "SkillRootsConfig": "mini_codex.skills.discovery",
        "skill_roots": "mini_codex.skills.discovery",
        "build_skill_injections": "mini_codex.skills.mentions",
        "extract_mentions": "mini_codex.skills.mentions",
        "select_skills": "mini_codex.skills.mentions",
        "SkillError": "mini_codex.skills.model",
        "SkillLoadOutcome": "mini_codex.skills.model",
        "SkillRoot": "mini_codex.skills.model",
        "SkillScope": "mini_codex.skills.model",
        "SkillSelection": "mini_codex.skills.model",
        "SkillSpec": "mini_codex.skills.model",
        "LoadedPlugin": "mini_codex.skills.plugins",
        "apply_plugins": "mini_codex.skills.plugins",
        "load_plugin": "mini_codex.skills.plugins",
        "load_plugins": "mini_codex.skills.plugins",
        "HOST_SKILLS_ID": "mini_codex.skills.section",
        "host_skills_section": "mini_codex.skills.section",
        "SkillsService": "mini_codex.skills.service",
        "StepSkills": "mini_codex.skills.service",
    },
)
