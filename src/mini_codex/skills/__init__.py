"""Skills and plugins: ``SKILL.md`` folders as Codex presents them (spec/codex-surfaces.md §2–§3).

* ``discovery``: the roots and their order, the bounded, hostile-file-safe scan, the parse cache;
* ``catalog``: the budgeted ``<skills_instructions>`` rendering; ``section``: ``host_skills``;
* ``mentions``: ``$name`` / structured selections → ``<skill>`` user messages;
* ``plugins``: ``.codex-plugin/plugin.json`` bundles (skills, MCP servers, hooks);
* ``service``: what a session keeps (discovery per turn, warnings once).
"""

from mini_codex.skills.catalog import CatalogBudget, RenderedCatalog, default_budget, render_catalog
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
