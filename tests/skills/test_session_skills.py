"""Skills in a real session (ScriptedModel is the only fake): the catalog in the request, a change
mid-session (one diff, no repeat), ``$name`` and structured mentions, ambiguity, unreadable
skills as warnings, one warning per bad skill."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from runtime_harness import describe_rollout, open_session
from skill_files import write_skill

from mini_codex.models.base import Prompt
from mini_codex.protocol import InputText, Message
from mini_codex.protocol.session_events import WarningEvent
from mini_codex.skills.model import SkillSelection
from mini_codex.testing import ScriptedResponse, assistant

pytestmark = pytest.mark.anyio


def _texts(prompt: Prompt, role: str) -> list[str]:
    return [
        part.text
        for item in prompt.input
        if isinstance(item, Message) and item.role == role
        for part in item.content
        if isinstance(part, InputText)
    ]


def _catalogs(prompt: Prompt) -> list[str]:
    return [t for t in _texts(prompt, "developer") if t.startswith("<skills_instructions>")]


def _skill_messages(prompt: Prompt) -> list[str]:
    return [t for t in _texts(prompt, "user") if t.startswith("<skill>")]


def _replies(n: int) -> list[ScriptedResponse]:
    return [ScriptedResponse([assistant(f"answer {i}")]) for i in range(n)]


async def test_a_skills_change_mid_session_is_one_diff_and_never_repeated(tmp_path: Path) -> None:
    skills = tmp_path / "work" / ".agents" / "skills"
    write_skill(skills, "first", "The first skill.")
    async with open_session(tmp_path, _replies(3)) as run:
        await run.session.run_turn("hello")
        write_skill(skills, "second", "The second skill.")
        await run.session.run_turn("again")
        await run.session.run_turn("and again")
        prompts = run.prompts
        lines = describe_rollout(run.rollout())
    root = skills.resolve()
    first = _catalogs(prompts[0])
    assert len(first) == 1
    assert "- first: The first skill. (file: r0/first/SKILL.md)" in first[0]
    assert f"- `r0` = `{root}`" in first[0]
    # The second request holds the first catalog (history) and exactly one new one.
    second = _catalogs(prompts[1])
    assert second[0] == first[0]
    assert len(second) == 2
    assert "- second: The second skill. (file: r0/second/SKILL.md)" in second[1]
    assert _catalogs(prompts[2]) == second  # nothing changed: nothing new
    patches = [line for line in lines if line.startswith("world_state")]
    # One patch (the new skill is also a new workspace file), none in the third turn.
    assert patches == ["world_state full", "world_state patch host_skills,workspace"]


async def test_dollar_mentions_are_unambiguous_names_only(tmp_path: Path) -> None:
    work = tmp_path / "work"
    unique = write_skill(work / ".agents" / "skills", "uniq", "Only one.", body="Unique body.")
    write_skill(work / ".agents" / "skills", "dup", "Repo dup.")
    write_skill(tmp_path / "home" / "skills", "dup", "User dup.")
    write_skill(work / ".agents" / "skills", "path", "Named like an env var.")
    async with open_session(tmp_path, _replies(1)) as run:
        await run.session.run_turn("Use $dup, $uniq and $PATH (and $uniq again).")
        prompt = run.prompts[0]
    text = unique.read_text()
    assert _skill_messages(prompt) == [
        f"<skill>\n<name>uniq</name>\n<path>{unique.resolve()}</path>\n{text}\n</skill>"
    ]
    # The skill message comes right after the user's prompt.
    users = _texts(prompt, "user")
    assert users[-2:] == [
        "Use $dup, $uniq and $PATH (and $uniq again).",
        _skill_messages(prompt)[0],
    ]


async def test_structured_skill_inputs_and_unknown_paths(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "home" / "skills", "tidy", "Tidy up.")
    async with open_session(tmp_path, _replies(1)) as run:
        await run.session.run_turn(
            "please",
            skills=[SkillSelection(str(path), "tidy"), SkillSelection("/nowhere/SKILL.md", "x")],
        )
        prompt = run.prompts[0]
        warnings = [e.message for e in run.events_of(WarningEvent)]
    assert [m.split("\n")[1] for m in _skill_messages(prompt)] == ["<name>tidy</name>"]
    assert warnings == ["skill 'x' (/nowhere/SKILL.md) is not an available skill"]


async def test_an_unreadable_skill_is_a_warning_not_a_failed_turn(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "work" / ".agents" / "skills", "fragile", "Goes away.")

    async def probe(phase: str) -> None:
        if phase == "tools" and path.is_file():  # discovered already: now make it hostile
            path.unlink()
            os.mkfifo(path)

    async with open_session(tmp_path, _replies(1), probe=probe) as run:
        result = await run.session.run_turn("use $fragile")
        prompt = run.prompts[0]
        warnings = [e.message for e in run.events_of(WarningEvent)]
    assert result == "answer 0"
    assert _skill_messages(prompt) == []
    canonical = path.parent.resolve() / "SKILL.md"
    assert warnings == [
        f"Failed to load skill fragile at {canonical}: {canonical} is a FIFO; skipped"
    ]


async def test_a_bad_skill_is_reported_once_per_session(tmp_path: Path) -> None:
    skills = tmp_path / "work" / ".agents" / "skills"
    write_skill(skills, "good", "Fine.")
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no frontmatter\n")
    async with open_session(tmp_path, _replies(2)) as run:
        await run.session.run_turn("one")
        await run.session.run_turn("two")
        warnings = [e.message for e in run.events_of(WarningEvent)]
        catalogs = _catalogs(run.prompts[1])
    broken = (skills / "broken" / "SKILL.md").resolve()
    assert warnings == [f"failed to load skill {broken}: missing YAML frontmatter delimited by ---"]
    assert len(catalogs) == 1
    assert "broken" not in catalogs[0]


async def test_skills_vanishing_after_a_resume_is_told_once(tmp_path: Path) -> None:
    skills = tmp_path / "work" / ".agents" / "skills"
    path = write_skill(skills, "only", "The only skill.")
    async with open_session(tmp_path, _replies(1)) as run:
        await run.session.run_turn("hello")
        rollout = run.session.rollout_path
    path.unlink()
    path.parent.rmdir()
    async with open_session(tmp_path, _replies(2), resume_path=rollout) as run:
        await run.session.run_turn("still there?")
        await run.session.run_turn("and now?")
        prompts = run.prompts
    update = "<skills_instructions>\n## Skills update\nNo skills are available any more.\n"
    assert [c for c in _catalogs(prompts[0]) if c.startswith(update)] == [
        update + "</skills_instructions>"
    ]
    assert _catalogs(prompts[1]) == _catalogs(prompts[0])  # told once, not repeated
