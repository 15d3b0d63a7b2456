"""``$`` in the composer completes skill names (the session's skills, fuzzy matched); the sent
prompt then injects the skill's ``SKILL.md`` after it."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList
from tui_helpers import wait_for

from mini_codex.protocol import Message, message_text
from mini_codex.testing import ScriptedResponse, assistant
from mini_codex.tui.composer import Composer
from mini_codex.tui.run import ui_harness

pytestmark = pytest.mark.anyio


def _skill(folder: object, name: str) -> None:
    from pathlib import Path

    assert isinstance(folder, Path)
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name}.\n---\n")


async def test_dollar_completes_skill_names(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("noted")])])
    skills = harness.work / ".agents" / "skills"
    _skill(skills, "release-notes")
    _skill(skills, "refactor")
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press(*"use $relnot")
        menu = app.query_one("#menu", OptionList)
        await wait_for(pilot, lambda: menu.display is True)
        assert [menu.get_option_at_index(i).id for i in range(menu.option_count)] == [
            "release-notes"
        ]
        await pilot.press("tab")
        assert app.query_one(Composer).text == "use $release-notes "
        await pilot.press("enter")
        await wait_for(pilot, lambda: "noted" in app.transcript_lines())
    texts = [message_text(i) for i in harness.model.prompts[0].input if isinstance(i, Message)]
    assert texts[-2] == "use $release-notes"
    assert texts[-1].startswith("<skill>\n<name>release-notes</name>\n")
