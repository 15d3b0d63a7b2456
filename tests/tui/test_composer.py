"""The composer: history recall (persisted), @ mentions, paste collapsing, Ctrl+C / Ctrl+D, and
the resume picker."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from textual import events
from textual.widgets import OptionList
from tui_helpers import idle, type_and_send, wait_for

from mini_codex.protocol import Message, message_text
from mini_codex.testing import ScriptedResponse, assistant
from mini_codex.tui.composer import Composer
from mini_codex.tui.host import PICK
from mini_codex.tui.run import ui_harness
from mini_codex.tui.screens import ResumePicker

pytestmark = pytest.mark.anyio


async def test_up_recalls_history_which_is_persisted(make_harness) -> None:
    harness = make_harness(
        [ScriptedResponse([assistant("one")]), ScriptedResponse([assistant("2")])]
    )
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "first prompt")
        await wait_for(pilot, lambda: idle(app) and "one" in app.transcript_lines())
        await type_and_send(pilot, "second")
        await wait_for(pilot, lambda: idle(app) and "2" in app.transcript_lines())
        composer = app.query_one(Composer)
        await pilot.press("up")
        assert composer.text == "second"
        await pilot.press("up")
        assert composer.text == "first prompt"
        await pilot.press("down")
        assert composer.text == "second"
        await pilot.press("down")
        assert composer.text == ""
    lines = (harness.home / "history.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in lines] == ["first prompt", "second"]
    again = harness.app()
    async with ui_harness(again) as pilot:
        await pilot.press("up")
        assert again.query_one(Composer).text == "second"


async def test_at_mention_completes_a_workspace_file_by_fuzzy_search(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("seen")])])
    (harness.work / "src").mkdir()
    (harness.work / "src" / "hello_world.py").write_text("x = 1\n")
    (harness.work / "README.md").write_text("# r\n")
    (harness.work / ".gitignore").write_text("ignored.txt\n")
    (harness.work / "ignored.txt").write_text("no\n")
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press(*"look at @hwp")
        menu = app.query_one("#menu", OptionList)
        await wait_for(pilot, lambda: menu.display is True)
        assert [menu.get_option_at_index(i).id for i in range(menu.option_count)] == [
            "src/hello_world.py"
        ]
        await pilot.press("tab")
        assert app.query_one(Composer).text == "look at @src/hello_world.py "
        await pilot.press(*"@ignored")
        await pilot.pause(0.05)
        assert menu.display is False  # ignored files are not in the workspace set
        await pilot.press(*["backspace"] * 8)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "seen" in app.transcript_lines())
    texts = [message_text(i) for i in harness.model.prompts[0].input if isinstance(i, Message)]
    assert texts[-1] == "look at @src/hello_world.py"


async def test_a_large_paste_is_collapsed_and_sent_whole(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("got it")])])
    app = harness.app()
    pasted = "\n".join(f"line {i}" for i in range(200))
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        composer = app.query_one(Composer)
        await pilot.press(*"see: ")
        composer.post_message(events.Paste(pasted))
        await pilot.pause(0.1)
        assert composer.text == f"see: [Pasted {len(pasted)} chars #1]"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "got it" in app.transcript_lines())
    texts = [message_text(i) for i in harness.model.prompts[0].input if isinstance(i, Message)]
    assert texts[-1] == f"see: {pasted}"


async def test_ctrl_j_adds_a_line_and_ctrl_c_clears_then_quits(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("x")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        composer = app.query_one(Composer)
        await pilot.press("a", "ctrl+j", "b")
        assert composer.text == "a\nb"
        await pilot.press("ctrl+c")
        assert composer.text == ""
        assert app._exit is False
        await pilot.press("ctrl+c")
        assert app._exit is False  # the first Ctrl+C on an empty composer only warns
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
        assert app._exit is True


async def test_ctrl_d_quits_only_on_an_empty_composer(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("x")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press("z", "ctrl+d")
        assert app._exit is False
        await pilot.press("backspace", "ctrl+d")
        await pilot.pause(0.1)
        assert app._exit is True


async def test_the_resume_picker_lists_recent_sessions_and_resumes_one(make_harness) -> None:
    harness = make_harness(
        [ScriptedResponse([assistant("first answer")]), ScriptedResponse([assistant("resumed")])]
    )
    app = harness.app(prompt="the very first prompt")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: "first answer" in app.transcript_lines())
        first = app.session.session_id
    picking = harness.app(target=PICK)
    async with ui_harness(picking) as pilot:
        await wait_for(
            pilot,
            lambda: (
                isinstance(picking.screen, ResumePicker) and bool(picking.screen.query(OptionList))
            ),
        )
        options = picking.screen.query_one(OptionList)
        label = str(options.get_option_at_index(0).prompt)
        assert label.endswith(
            f"{harness.work}  the very first prompt".replace(str(harness.work), str(harness.work))
        )
        # The session's start, in local time to the minute (it started moments ago).
        started = datetime.strptime(label[:16], "%Y-%m-%d %H:%M")
        assert label[16:18] == "  "
        assert timedelta(0) <= datetime.now() - started < timedelta(minutes=10)
        await pilot.press("enter")
        await wait_for(pilot, lambda: picking.session is not None)
        assert picking.session.session_id == first
        assert picking.transcript_lines()[0].startswith(f"resumed session {first[:8]}")
        await type_and_send(pilot, "go on")
        await wait_for(pilot, lambda: "resumed" in picking.transcript_lines())
    second = harness.model.prompts[1]
    texts = [message_text(i) for i in second.input if isinstance(i, Message) and i.role == "user"]
    assert texts[-2:] == ["the very first prompt", "go on"]


async def test_a_prompt_sent_while_the_session_starts_is_sent_when_it_opens(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("answered")])])
    harness.open_delay_s = 0.5
    app = harness.app()
    async with ui_harness(app) as pilot:
        await type_and_send(pilot, "early")
        assert app.session is None
        assert str(app.query_one("#queued").content) == "› early  (queued)"
        await wait_for(pilot, lambda: "answered" in app.transcript_lines())
        assert app.query_one("#queued").display is False
    texts = [message_text(i) for i in harness.model.prompts[0].input if isinstance(i, Message)]
    assert texts[-1] == "early"
