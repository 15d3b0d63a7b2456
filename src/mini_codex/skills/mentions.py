"""Explicit skill use: ``$name`` mentions and structured skill items → ``<skill>`` messages.

Selection (spec/codex-surfaces.md §2.3, Codex's ``core-skills/src/injection.rs``):

* structured selections (``{"type": "skill", "path"}``) first, matched by canonical path; their
  names are then not matched as plain text again;
* then ``[$name](path)`` links (by path) and plain ``$name`` tokens in the user's text (names of
  letters, digits, ``_``, ``-`` and ``:``); a plain name is used only when exactly one skill has
  it (ambiguous names are ignored), and common environment variables (``$PATH``, ``$HOME``, ...)
  never count as mentions;
* each skill at most once, in catalog order.

Each selected skill's whole ``SKILL.md`` becomes one user message after the prompt:
``<skill>\\n<name>N</name>\\n<path>P</path>\\n`` + contents + ``\\n</skill>``. A file that cannot be
read (gone, no longer a regular file, over 1 MiB, not UTF-8) is a warning, never a failed turn.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

import msgspec

from mini_codex.discovery.safe_read import read_workspace_file
from mini_codex.skills.discovery import MAX_SKILL_FILE_BYTES
from mini_codex.skills.model import SkillLoadOutcome, SkillSelection, SkillSpec

__all__ = [
    "COMMON_ENV_VARS",
    "SkillInjections",
    "build_skill_injections",
    "extract_mentions",
    "select_skills",
    "skill_message_text",
]

COMMON_ENV_VARS = frozenset(
    {"PATH", "HOME", "USER", "SHELL", "PWD", "TMPDIR", "TEMP", "TMP", "LANG", "TERM"}
    | {"XDG_CONFIG_HOME"}
)
_NAME = r"[A-Za-z0-9_:-]+"
_LINK = re.compile(rf"\[\$({_NAME})\]\s*\(([^)]*)\)")
_PLAIN = re.compile(rf"\$({_NAME})")


class Mentions(msgspec.Struct, frozen=True):
    plain: frozenset[str]
    paths: frozenset[str]


def extract_mentions(text: str) -> Mentions:
    """The plain ``$name`` tokens and linked paths of one text."""
    plain: set[str] = set()
    paths: set[str] = set()
    position = 0
    while True:
        link = _LINK.search(text, position)
        plain_match = _PLAIN.search(text, position)
        if plain_match is None and link is None:
            break
        if link is not None and (plain_match is None or link.start() < plain_match.start()):
            name, path = link.group(1), link.group(2).strip()
            if path and name.upper() not in COMMON_ENV_VARS:
                if not path.startswith(("app://", "mcp://", "plugin://")):
                    paths.add(path.removeprefix("skill://"))
            position = link.end()
            continue
        assert plain_match is not None
        if plain_match.group(1).upper() not in COMMON_ENV_VARS:
            plain.add(plain_match.group(1))
        position = plain_match.end()
    return Mentions(frozenset(plain), frozenset(paths))


def _canonical_file(path: str) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return path


def select_skills(
    outcome: SkillLoadOutcome,
    texts: Iterable[str],
    selections: Sequence[SkillSelection] = (),
) -> tuple[list[SkillSpec], list[str]]:
    """The explicitly used skills, and warnings for selections that name no known skill."""
    counts: dict[str, int] = {}
    for skill in outcome.skills:
        counts[skill.name] = counts.get(skill.name, 0) + 1
    selected: list[SkillSpec] = []
    seen: set[str] = set()
    blocked: set[str] = set()
    warnings: list[str] = []
    for selection in selections:
        if selection.name:
            blocked.add(selection.name)
        chosen = outcome.by_path(_canonical_file(selection.path))
        if chosen is None:
            label = selection.name or selection.path
            warnings.append(f"skill {label!r} ({selection.path}) is not an available skill")
            continue
        if chosen.path not in seen:
            seen.add(chosen.path)
            selected.append(chosen)
    for text in texts:
        mentions = extract_mentions(text)
        if not mentions.plain and not mentions.paths:
            continue
        linked = {_canonical_file(path) for path in mentions.paths}
        for skill in outcome.skills:
            if skill.path not in seen and skill.path in linked:
                seen.add(skill.path)
                selected.append(skill)
        for skill in outcome.skills:
            if skill.path in seen or skill.name in blocked or skill.name not in mentions.plain:
                continue
            if counts.get(skill.name) != 1:
                continue  # ambiguous: several skills share the name
            seen.add(skill.path)
            selected.append(skill)
    return selected, warnings


def skill_message_text(name: str, path: str, contents: str) -> str:
    return f"<skill>\n<name>{name}</name>\n<path>{path}</path>\n{contents}\n</skill>"


class SkillInjections(msgspec.Struct, frozen=True):
    texts: tuple[str, ...]
    """One ``<skill>`` user-message text per skill read."""
    warnings: tuple[str, ...]


def build_skill_injections(skills: Iterable[SkillSpec]) -> SkillInjections:
    """Read each skill's file now (it may have changed since discovery)."""
    texts: list[str] = []
    warnings: list[str] = []
    for skill in skills:
        try:
            content = read_workspace_file(skill.path, MAX_SKILL_FILE_BYTES, boundary=None)
            if content.truncated:
                raise OSError(f"larger than {MAX_SKILL_FILE_BYTES} bytes")
            text = content.data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not valid UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
            warnings.append(f"Failed to load skill {skill.name} at {skill.path}: {reason}")
            continue
        texts.append(skill_message_text(skill.name, skill.path, text))
    return SkillInjections(tuple(texts), tuple(warnings))
