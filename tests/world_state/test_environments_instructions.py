"""The ``environments_instructions`` section against Codex 0.169's recorded fragment."""

from __future__ import annotations

import json
from pathlib import Path

from mini_codex.world_state.section import Absent, Known, Unknown
from mini_codex.world_state.sections.environments_instructions import (
    EnvironmentsInstructionsSection,
)

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "exec_server"
    / "codex_environments_instructions_request.json"
)


def codex_fragment() -> str:
    body = json.loads(FIXTURE.read_text())
    [text] = [
        part["text"]
        for item in body["input"]
        if item.get("role") == "developer"
        for part in item["content"]
        if part.get("text", "").startswith("<environments_instructions>")
    ]
    return str(text)


def test_it_renders_codexs_text_once() -> None:
    on, off = EnvironmentsInstructionsSection(True), EnvironmentsInstructionsSection(False)
    fragment = on.render_diff(Absent())
    assert fragment is not None
    assert (fragment.role, fragment.text) == ("developer", codex_fragment())
    assert on.render_diff(Known(False)) == fragment
    assert on.render_diff(Known(True)) is None
    assert on.render_diff(Unknown()) is None
    assert off.render_diff(Absent()) is None
    assert off.render_diff(Known(True)) is None


def test_its_matchers_know_the_fragment() -> None:
    text = codex_fragment()
    assert EnvironmentsInstructionsSection.matches_legacy_fragment("developer", text)
    assert not EnvironmentsInstructionsSection.matches_legacy_fragment("user", text)
    assert EnvironmentsInstructionsSection.has_retained_fragment_matcher()
    assert EnvironmentsInstructionsSection.matches_retained_fragment("developer", text)
