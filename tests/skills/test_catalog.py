"""The budgeted ``<skills_instructions>`` catalog and the ``host_skills`` section (pure)."""

from __future__ import annotations

from mini_codex.skills.catalog import (
    CatalogBudget,
    default_budget,
    render_catalog,
    render_catalog_body,
)
from mini_codex.skills.model import SkillLoadOutcome, SkillSpec
from mini_codex.skills.section import host_skills_section
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import ABSENT, Known
from mini_codex.world_state.state import WorldState

ROOT = "/ws/.agents/skills"
USER = "/home/u/.mini-codex/skills"


def _skill(name: str, description: str, root: str = ROOT, scope: str = "repo") -> SkillSpec:
    return SkillSpec(name, description, f"{root}/{name}/SKILL.md", scope, root)  # type: ignore[arg-type]


def _outcome(*skills: SkillSpec) -> SkillLoadOutcome:
    roots = tuple(dict.fromkeys(skill.root for skill in skills))
    return SkillLoadOutcome(skills=tuple(skills), roots=roots)


def _lines(body: str, heading: str) -> list[str]:
    lines = body.strip("\n").split("\n")
    start = lines.index(heading) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("### "))
    return lines[start:end]


def test_default_budget_is_two_percent_of_the_window_or_8000_characters() -> None:
    assert default_budget(200_000) == CatalogBudget("tokens", 4_000)
    assert default_budget(10) == CatalogBudget("tokens", 1)
    assert default_budget(None) == CatalogBudget("characters", 8_000)


def test_layout_roots_table_and_prompt_order() -> None:
    outcome = SkillLoadOutcome(
        skills=(_skill("zeta", "Z."), _skill("alpha", "A.", USER, "user"), _skill("beta", "B.")),
        roots=(USER, ROOT),
    )
    catalog = render_catalog(outcome, default_budget(None))
    assert catalog is not None
    body = catalog.body
    assert body.startswith("\n## Skills\n")
    assert body.endswith("\n")
    headings = [line for line in body.split("\n") if line.startswith("#")]
    assert headings == [
        "## Skills",
        "### Skill roots",
        "### Available skills",
        "### How to use skills",
    ]
    assert _lines(body, "### Skill roots") == [f"- `r0` = `{USER}`", f"- `r1` = `{ROOT}`"]
    # Repo skills before user skills, then by name (Codex's prompt rank).
    assert _lines(body, "### Available skills") == [
        "- beta: B. (file: r1/beta/SKILL.md)",
        "- zeta: Z. (file: r1/zeta/SKILL.md)",
        "- alpha: A. (file: r0/alpha/SKILL.md)",
    ]
    assert (catalog.included, catalog.omitted, catalog.truncated_chars, catalog.warning) == (
        3,
        0,
        0,
        None,
    )


def test_no_listed_skill_means_no_catalog() -> None:
    hidden = SkillSpec("x", "d", f"{ROOT}/x/SKILL.md", "repo", ROOT, allow_implicit=False)
    assert render_catalog(_outcome(hidden), default_budget(None)) is None
    assert render_catalog(SkillLoadOutcome(), default_budget(None)) is None


def _table_cost(budget: CatalogBudget) -> int:
    table = [f"- `r0` = `{ROOT}`"]
    return budget.cost(render_catalog_body(table, [])) - budget.cost(render_catalog_body([], []))


def test_over_budget_descriptions_are_shortened_fairly() -> None:
    skills = [_skill("aa", "a" * 40), _skill("bb", "b" * 10), _skill("cc", "c" * 40)]
    minimum = sum(len(f"- {s.name}: (file: r0/{s.name}/SKILL.md)\n") for s in skills)
    # Room for 20 more characters: each description costs its characters plus one space.
    limit = _table_cost(CatalogBudget("characters", 0)) + minimum + 20
    catalog = render_catalog(_outcome(*skills), CatalogBudget("characters", limit))
    assert catalog is not None
    assert _lines(catalog.body, "### Available skills") == [
        "- aa: aaaaaa (file: r0/aa/SKILL.md)",
        "- bb: bbbbbb (file: r0/bb/SKILL.md)",
        "- cc: ccccc (file: r0/cc/SKILL.md)",
    ]  # 5 each, and the last 2 characters go to the earliest lines (Codex's round robin)
    assert (catalog.included, catalog.omitted, catalog.truncated_chars) == (3, 0, 90 - 17)
    assert catalog.warning is None  # fewer than 100 characters cut per skill on average


def test_then_descriptions_are_dropped_and_skills_omitted_with_a_warning() -> None:
    skills = [_skill(f"s{i}", "long description " * 20) for i in range(5)]
    one_line = len("- s0: (file: r0/s0/SKILL.md)\n")
    limit = _table_cost(CatalogBudget("characters", 0)) + 2 * one_line + 3
    catalog = render_catalog(_outcome(*skills), CatalogBudget("characters", limit))
    assert catalog is not None
    assert _lines(catalog.body, "### Available skills") == [
        "- s0: (file: r0/s0/SKILL.md)",
        "- s1: (file: r0/s1/SKILL.md)",
    ]
    assert (catalog.included, catalog.omitted) == (2, 3)
    assert catalog.warning == (
        f"The skills list exceeds the skills budget ({limit} characters): every description "
        "was left out and 3 more skills were not listed to the model. Disable unused skills "
        "or plugins."
    )


def test_heavy_truncation_warns_and_a_tiny_budget_falls_back_to_absolute_paths() -> None:
    skills = [_skill("solo", "x" * 1000)]
    tokens = CatalogBudget("tokens", _table_cost(CatalogBudget("tokens", 0)) + 20)
    catalog = render_catalog(_outcome(*skills), tokens)
    assert catalog is not None
    assert catalog.truncated_chars > 900
    assert catalog.warning == (
        "Skill descriptions were shortened to fit the skills budget (2% of the context "
        "window); every skill is still listed. Disable unused skills or plugins to leave "
        "more room."
    )
    tiny = render_catalog(_outcome(*skills), CatalogBudget("characters", 5))
    assert tiny is not None
    assert "### Skill roots" not in tiny.body  # the table alone does not fit: absolute paths
    assert (tiny.included, tiny.omitted) == (0, 1)


def test_host_skills_section_renders_new_changed_and_vanished_catalogs() -> None:
    one = render_catalog(_outcome(_skill("one", "1")), default_budget(None))
    two = render_catalog(_outcome(_skill("one", "1"), _skill("two", "2")), default_budget(None))
    assert one is not None
    assert two is not None
    first, second, gone = (
        host_skills_section(one),
        host_skills_section(two),
        host_skills_section(None),
    )
    assert first.render(ABSENT) == Fragment(
        "developer", "<skills_instructions>", "</skills_instructions>", one.body
    )
    assert first.render(Known(first.snapshot)) is None
    assert second.render(Known(first.snapshot)) == Fragment(
        "developer", "<skills_instructions>", "</skills_instructions>", two.body
    )
    assert gone.snapshot is None
    assert gone.render(ABSENT) is None
    assert gone.render(Known(first.snapshot)) == Fragment(
        "developer",
        "<skills_instructions>",
        "</skills_instructions>",
        "\n## Skills update\nNo skills are available any more.\n",
    )


def test_host_skills_goes_just_before_permissions() -> None:
    from mini_codex.world_state.sections import PermissionsSection

    catalog = render_catalog(_outcome(_skill("one", "1")), default_budget(None))
    state = WorldState()
    state.add(PermissionsSection("never", "read-only"))
    state.add(host_skills_section(catalog))
    assert state.ids == ("host_skills", "permissions")
    assert state.snapshot().to_json()["host_skills"] == {"body": catalog.body if catalog else ""}
