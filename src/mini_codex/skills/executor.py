"""Skills that live on a remote executor (issue 27 item 6): capability roots on environments.

Each ready remote environment contributes its capability roots: the ``capability_roots`` of its
``environments.toml`` entry, then ``<cwd>/.agents/skills``. ``discover_executor_skills`` walks a
root through the executor's ``fs/readDirectory`` (at most ``MAX_DEPTH`` levels and
``MAX_DIRS`` folders, dot-entries skipped), reads every ``SKILL.md`` with ``fs/readFile`` (at
most ``MAX_SKILL_BYTES``) and checks its frontmatter as for local skills (``frontmatter``); a bad
one is a warning. As Codex does (PR #30088): a root is discovered once and cached by
``(environment, root)``; while its environment is not ready its skills are hidden but the cache
is kept; a new session starts with a new cache.

``render_executor_skills`` is the body of the executor ``skills`` section (``executor_section``):
``## Skills``, a ``### Skill roots`` table (`` - `e0` = `<path>` on `<environment>` ``) and
``### Available skills`` lines ``- <name>: <description> (file: e0/<dir>/SKILL.md)``.
"""

from __future__ import annotations

import posixpath

import msgspec

from mini_codex.environments.client import ExecServerClient, ExecutorRequestError
from mini_codex.protocol.exec_server_codec import file_uri
from mini_codex.skills.frontmatter import SkillParseError, parse_skill_text

__all__ = [
    "ExecutorSkill",
    "ExecutorSkillsCache",
    "discover_executor_skills",
    "environment_roots",
    "render_executor_skills",
]

MAX_DEPTH = 6
MAX_DIRS = 2000
MAX_SKILL_BYTES = 1024 * 1024


class ExecutorSkill(msgspec.Struct, frozen=True):
    environment: str
    root: str
    name: str
    description: str
    path: str
    """Absolute path of the ``SKILL.md`` on the executor."""


def environment_roots(cwd: str, configured: tuple[str, ...]) -> tuple[str, ...]:
    roots = [*configured, posixpath.join(cwd, ".agents", "skills")]
    return tuple(dict.fromkeys(posixpath.normpath(root) for root in roots))


async def _entries(client: ExecServerClient, path: str) -> list[dict[str, object]] | None:
    try:
        result = await client.request("fs/readDirectory", {"path": file_uri(path)})
    except ExecutorRequestError:
        return None
    entries = result.get("entries")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


async def discover_executor_skills(
    client: ExecServerClient, environment: str, root: str
) -> tuple[tuple[ExecutorSkill, ...], tuple[str, ...]]:
    """The skills under ``root`` on the executor, sorted by name, and warnings."""
    skills: list[ExecutorSkill] = []
    warnings: list[str] = []
    level = [root]
    seen = 0
    for _depth in range(MAX_DEPTH):
        below: list[str] = []
        for directory in level:
            seen += 1
            if seen > MAX_DIRS:
                warnings.append(f"skills root {root} on `{environment}`: over {MAX_DIRS} folders")
                break
            entries = await _entries(client, directory)
            if entries is None:
                continue  # a missing root is simply no skills
            names = {str(e.get("fileName")): e for e in entries}
            if directory != root and "SKILL.md" in names and names["SKILL.md"].get("isFile"):
                skill = await _read_skill(client, environment, root, directory, warnings)
                if skill is not None:
                    skills.append(skill)
                continue
            below.extend(
                posixpath.join(directory, name)
                for name, entry in sorted(names.items())
                if entry.get("isDirectory") and not name.startswith(".")
            )
        level = below
        if not level:
            break
    return tuple(sorted(skills, key=lambda s: (s.name, s.path))), tuple(warnings)


async def _read_skill(
    client: ExecServerClient, environment: str, root: str, directory: str, warnings: list[str]
) -> ExecutorSkill | None:
    path = posixpath.join(directory, "SKILL.md")
    try:
        data = await client.read_file(path)
    except ExecutorRequestError as exc:
        warnings.append(f"failed to load skill {path} on `{environment}`: {exc.message}")
        return None
    if len(data) > MAX_SKILL_BYTES:
        warnings.append(f"failed to load skill {path} on `{environment}`: larger than 1 MiB")
        return None
    try:
        parsed = parse_skill_text(data.decode("utf-8", "replace"), posixpath.basename(directory))
    except SkillParseError as exc:
        warnings.append(f"failed to load skill {path} on `{environment}`: {exc}")
        return None
    return ExecutorSkill(environment, root, parsed.name, parsed.description, path)


class ExecutorSkillsCache(msgspec.Struct):
    """Discovered roots by ``(environment, root)``; kept while the environment is away."""

    found: dict[tuple[str, str], tuple[ExecutorSkill, ...]] = msgspec.field(default_factory=dict)


def render_executor_skills(skills: tuple[ExecutorSkill, ...]) -> str | None:
    """The section body for ``skills`` (None: there are none)."""
    if not skills:
        return None
    roots = list(dict.fromkeys((s.environment, s.root) for s in skills))
    alias = {root: f"e{index}" for index, root in enumerate(roots)}
    lines = ["## Skills", "### Skill roots"]
    lines.extend(f"- `{alias[r]}` = `{r[1]}` on `{r[0]}`" for r in roots)
    lines.append("### Available skills")
    for skill in sorted(skills, key=lambda s: (s.name, s.environment, s.path)):
        relative = posixpath.relpath(skill.path, skill.root)
        where = f"{alias[(skill.environment, skill.root)]}/{relative}"
        lines.append(f"- {skill.name}: {skill.description} (file: {where})")
    return "\n".join(lines)
