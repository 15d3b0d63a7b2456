"""Parsing a ``SKILL.md``: the YAML frontmatter and its checks (pure; no file access).

A skill file starts with a ``---`` line, then YAML, then a closing ``---`` line, then the
instructions. The frontmatter must be a mapping; ``name`` (at most 64 characters, falling back to
the folder name) and ``description`` (at most 1024) are single-lined (runs of whitespace become
one space). Every failure is a :class:`SkillParseError` whose message says why, in Codex's words
where Codex has them ("missing YAML frontmatter delimited by ---").
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "MAX_DESCRIPTION_LEN",
    "MAX_NAME_LEN",
    "ParsedFrontmatter",
    "SkillParseError",
    "allows_implicit_invocation",
    "parse_skill_text",
    "single_line",
]


def _load(text: str) -> Any:
    """``text`` parsed with libyaml's loader when PyYAML has it (about 10x faster), else the
    pure-Python one; raises ``yaml.YAMLError``. PyYAML (~35 ms to import) is imported here, when
    a skill file is parsed, not at start-up."""
    import yaml

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)


MAX_NAME_LEN = 64
MAX_DESCRIPTION_LEN = 1024


class SkillParseError(ValueError):
    """A ``SKILL.md`` that is not a valid skill; the message is the reason."""


class ParsedFrontmatter(msgspec.Struct, frozen=True):
    name: str
    description: str


def single_line(value: str) -> str:
    return " ".join(value.split())


def _frontmatter(text: str) -> str | None:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            body = "\n".join(lines[1:index])
            return body if body.strip() else None
    return None


def _string_field(data: dict[Any, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise SkillParseError(f"invalid {key}: expected a string")
    return single_line(str(value))


def parse_skill_text(text: str, folder_name: str) -> ParsedFrontmatter:
    """The checked ``name`` and ``description`` of a skill file's ``text``."""
    raw = _frontmatter(text)
    if raw is None:
        raise SkillParseError("missing YAML frontmatter delimited by ---")
    import yaml

    try:
        data = _load(raw)
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "parse error"
        raise SkillParseError(f"invalid YAML: {first}") from None
    if not isinstance(data, dict):
        raise SkillParseError("invalid YAML: the frontmatter is not a mapping")
    name = _string_field(data, "name") or single_line(folder_name) or "skill"
    description = _string_field(data, "description") or ""
    for field, value, limit in (
        ("name", name, MAX_NAME_LEN),
        ("description", description, MAX_DESCRIPTION_LEN),
    ):
        if len(value) > limit:
            raise SkillParseError(f"invalid {field}: exceeds maximum length of {limit} characters")
    return ParsedFrontmatter(name=name, description=description)


def allows_implicit_invocation(metadata_text: str) -> bool:
    """``policy.allow_implicit_invocation`` of an ``agents/openai.yaml`` (fail open: True)."""
    import yaml

    try:
        data = _load(metadata_text)
    except yaml.YAMLError:
        return True
    policy = data.get("policy") if isinstance(data, dict) else None
    allowed = policy.get("allow_implicit_invocation") if isinstance(policy, dict) else None
    return allowed is not False
