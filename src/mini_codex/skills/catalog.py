"""The skills catalog as the model sees it: Codex's ``<skills_instructions>`` layout, budgeted.

Layout (spec/codex-surfaces.md §2.3; recorded from Codex 0.169 in
``tests/fixtures/codex_skills``)::

    <skills_instructions>
    ## Skills
    <intro>
    ### Skill roots
    - `r0` = `/abs/root`
    ### Available skills
    - <name>: <description> (file: r0/<rel>/SKILL.md)
    ### How to use skills
    <guidance>
    </skills_instructions>

Skills allowed for implicit use are listed, ordered by prompt rank (system, admin, repo, user),
then name, then path. Paths are aliased through the roots table (as 0.169 always does); when
the table alone would not fit the budget, absolute paths are used and the table is left out.

Budget: 2 % of the context window in tokens (4 bytes a token) or 8,000 characters when the
window is unknown, spent on the skill lines (plus the roots table). Over budget, descriptions are
shortened fairly (every description gets the same number of characters, the rest of the budget
going one character each to the earlier lines), then, if even empty descriptions do not fit, the
lines are kept in order while they fit and the rest omitted, with a warning for the user.

What does not belong here: finding skills (``discovery.py``), the world-state section
(``section.py``).
"""

from __future__ import annotations

import functools
from importlib.resources import files
from typing import Literal

import msgspec

from mini_codex.skills.model import SkillLoadOutcome, SkillScope, SkillSpec, scope_rank

__all__ = [
    "DEFAULT_CHAR_BUDGET",
    "CatalogBudget",
    "RenderedCatalog",
    "default_budget",
    "render_catalog",
    "render_catalog_body",
]

DEFAULT_CHAR_BUDGET = 8_000
CONTEXT_WINDOW_PERCENT = 2
TRUNCATION_WARNING_THRESHOLD = 100
"""Average characters cut per description above which the user is told."""


class CatalogBudget(msgspec.Struct, frozen=True):
    unit: Literal["tokens", "characters"]
    limit: int

    def cost(self, text: str) -> int:
        if self.unit == "characters":
            return len(text)
        return (len(text.encode("utf-8")) + 3) // 4

    def with_limit(self, limit: int) -> CatalogBudget:
        return CatalogBudget(self.unit, limit)


def default_budget(context_window: int | None) -> CatalogBudget:
    if context_window is not None and context_window > 0:
        return CatalogBudget("tokens", max(1, context_window * CONTEXT_WINDOW_PERCENT // 100))
    return CatalogBudget("characters", DEFAULT_CHAR_BUDGET)


class RenderedCatalog(msgspec.Struct, frozen=True):
    body: str
    """The text between ``<skills_instructions>`` and ``</skills_instructions>``."""
    included: int
    omitted: int
    truncated_chars: int
    warning: str | None


@functools.cache
def _prose(name: str) -> str:
    return (files("mini_codex.skills") / "prompts" / name).read_text("utf-8").strip()


def render_catalog_body(root_lines: list[str], skill_lines: list[str]) -> str:
    lines = ["## Skills"]
    if root_lines:
        lines += [_prose("intro_aliases.md"), "### Skill roots", *root_lines]
    else:
        lines.append(_prose("intro_absolute.md"))
    lines += ["### Available skills", *skill_lines, "### How to use skills"]
    lines.append(_prose("how_to_use.md"))
    return "\n" + "\n".join(lines) + "\n"


_PROMPT_ORDER: tuple[SkillScope, ...] = ("system", "admin", "repo", "user")
"""The order skills are listed in the prompt (Codex's), unlike the discovery order."""


class _Line(msgspec.Struct, frozen=True):
    name: str
    description: str
    path: str

    def render(self, chars: int) -> str:
        if chars <= 0 or not self.description:
            return f"- {self.name}: (file: {self.path})"
        return f"- {self.name}: {self.description[:chars]} (file: {self.path})"

    def cost(self, budget: CatalogBudget, chars: int) -> int:
        return budget.cost(self.render(chars) + "\n")


def render_catalog(outcome: SkillLoadOutcome, budget: CatalogBudget) -> RenderedCatalog | None:
    """The catalog of ``outcome``'s implicitly usable skills, or None when there are none."""
    skills = sorted(
        (skill for skill in outcome.skills if skill.allow_implicit),
        key=lambda s: (scope_rank(s.scope, _PROMPT_ORDER), s.name, s.path),
    )
    if not skills:
        return None
    aliases = {root: f"r{index}" for index, root in enumerate(_used_roots(outcome, skills))}
    root_lines = [f"- `{alias}` = `{root}`" for root, alias in aliases.items()]
    table_cost = budget.cost(render_catalog_body(root_lines, [])) - budget.cost(
        render_catalog_body([], [])
    )
    if root_lines and table_cost < budget.limit:
        lines = [_Line(s.name, s.description, _aliased(s, aliases)) for s in skills]
        limit = budget.with_limit(budget.limit - table_cost)
    else:
        root_lines = []
        lines = [_Line(s.name, s.description, s.path) for s in skills]
        limit = budget
    rendered, omitted, truncated = _fit(lines, limit)
    return RenderedCatalog(
        body=render_catalog_body(root_lines, rendered),
        included=len(rendered),
        omitted=omitted,
        truncated_chars=truncated,
        warning=_warning(budget, len(skills), omitted, truncated),
    )


def _used_roots(outcome: SkillLoadOutcome, skills: list[SkillSpec]) -> list[str]:
    used = {skill.root for skill in skills}
    return [root for root in outcome.roots if root in used]


def _aliased(skill: SkillSpec, aliases: dict[str, str]) -> str:
    alias = aliases.get(skill.root)
    prefix = skill.root.rstrip("/") + "/"
    if alias is None or not skill.path.startswith(prefix):
        return skill.path
    return f"{alias}/{skill.path[len(prefix) :]}"


def _fit(lines: list[_Line], budget: CatalogBudget) -> tuple[list[str], int, int]:
    """(rendered lines, omitted count, description characters cut)."""
    total_chars = sum(len(line.description) for line in lines)
    if sum(line.cost(budget, len(line.description)) for line in lines) <= budget.limit:
        return [line.render(len(line.description)) for line in lines], 0, 0
    minimum = sum(line.cost(budget, 0) for line in lines)
    if minimum <= budget.limit:
        chars = _fair_shares(lines, budget)
        shortened = [line.render(n) for line, n in zip(lines, chars, strict=True)]
        return shortened, 0, total_chars - sum(chars)
    rendered: list[str] = []
    used = 0
    for line in lines:
        cost = line.cost(budget, 0)
        if used + cost <= budget.limit:
            used += cost
            rendered.append(line.render(0))
    return rendered, len(lines) - len(rendered), total_chars


def _fair_shares(lines: list[_Line], budget: CatalogBudget) -> list[int]:
    """Description characters per line: the largest common cap that fits, then one more
    character each for the earliest lines that can still take one (a round robin's result)."""

    def allocation(cap: int) -> list[int]:
        return [min(cap, len(line.description)) for line in lines]

    def total(chars: list[int]) -> int:
        return sum(line.cost(budget, n) for line, n in zip(lines, chars, strict=True))

    low, high = 0, max(len(line.description) for line in lines)
    while low < high:
        middle = (low + high + 1) // 2
        if total(allocation(middle)) <= budget.limit:
            low = middle
        else:
            high = middle - 1
    chars = allocation(low)
    used = total(chars)
    for index, line in enumerate(lines):
        if chars[index] < len(line.description):
            before = line.cost(budget, chars[index])
            after = line.cost(budget, chars[index] + 1)
            if used - before + after <= budget.limit:
                chars[index] += 1
                used += after - before
    return chars


def _warning(budget: CatalogBudget, total: int, omitted: int, truncated: int) -> str | None:
    what = (
        "the skills budget (2% of the context window)"
        if budget.unit == "tokens"
        else f"the skills budget ({budget.limit} characters)"
    )
    if omitted:
        skills = "skill was" if omitted == 1 else "skills were"
        return (
            f"The skills list exceeds {what}: every description was left out and {omitted} "
            f"more {skills} not listed to the model. Disable unused skills or plugins."
        )
    if truncated and (truncated + total - 1) // total > TRUNCATION_WARNING_THRESHOLD:
        return (
            f"Skill descriptions were shortened to fit {what}; every skill is still listed. "
            "Disable unused skills or plugins to leave more room."
        )
    return None
