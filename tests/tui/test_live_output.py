"""Running commands in the transcript: a live tail of the output while the call runs (shell and
exec_command), then the final output, exit code (or the session still running) and duration;
write_stdin cells. Real Session, real commands; each command waits for a file the test creates,
so the screen is checked while the command is really still running."""

from __future__ import annotations

import re

import pytest
from tui_helpers import idle, wait_for

from mini_codex.testing import ScriptedResponse, assistant, function_call
from mini_codex.tui.app import MiniCodexApp
from mini_codex.tui.cells import LiveTail
from mini_codex.tui.run import ui_harness

pytestmark = pytest.mark.anyio

WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done"


def cell(app: MiniCodexApp, title: str) -> str:
    """The text of the newest tool cell whose first line is ``title`` ("" while none is)."""
    found = [line for line in app.transcript_lines() if line.split("\n", 1)[0] == title]
    return found[-1] if found else ""


def without_duration(text: str) -> str:
    head, sep, _ = text.rpartition(" · ")
    return head + sep + "N.Ns" if sep else text


def test_the_live_tail_keeps_the_last_lines_decodes_split_utf8_and_drops_escapes() -> None:
    live = LiveTail(lines=3)
    assert live.text() == ""
    live.feed(b"one\ntwo\n\x1b[31mred\x1b[0m\nfou")
    assert live.text() == "… 1 earlier lines\ntwo\nred\nfou"
    live.feed(b"r\ncaf\xc3")  # "é" split across two chunks
    live.feed(b"\xa9\r\n50%\r100%")
    assert live.text() == "… 3 earlier lines\nfour\ncafé\n100%"
    assert live.earlier == 2


def test_the_live_tail_bounds_a_line_without_newline() -> None:
    live = LiveTail(lines=2, max_line_chars=10)
    for _ in range(1000):
        live.feed(b"x" * 1000)
    assert live.text() == "x" * 10


async def test_a_running_shell_command_shows_its_last_lines_live(make_harness) -> None:
    command = f"for i in $(seq 1 12); do echo row$i; done; {WAIT_FOR_GO}; echo finished"
    harness = make_harness(
        [
            ScriptedResponse([function_call("shell", {"command": command}, "s1")]),
            ScriptedResponse([assistant("all done")]),
        ]
    )
    app = harness.app(prompt="count to twelve")
    title = f"$ {command}"
    rows = [f"row{i}" for i in range(5, 13)]
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: "row12" in cell(app, title))
        assert cell(app, title) == "\n".join([title, "… 4 earlier lines", *rows, "⋯ running"])
        assert "s1" in app.transcript.live_tails
        (harness.work / "go").touch()
        await wait_for(pilot, lambda: idle(app) and "all done" in app.transcript_lines())
        final = "\n".join([title, "… 5 earlier lines", *rows[1:], "finished", "✓ exit 0 · N.Ns"])
        assert without_duration(cell(app, title)) == final
        assert app.transcript.live_tails == {}


async def test_exec_command_and_write_stdin_cells(make_harness) -> None:
    live_cmd = f"echo one; echo two; {WAIT_FOR_GO}; echo three"
    ask_cmd = "echo started; read answer; echo got $answer"
    harness = make_harness(
        [
            ScriptedResponse(
                [function_call("exec_command", {"cmd": live_cmd, "yield_time_ms": 20000}, "e1")]
            ),
            ScriptedResponse(
                [function_call("exec_command", {"cmd": ask_cmd, "yield_time_ms": 2000}, "e2")]
            ),
            ScriptedResponse(
                [
                    function_call(
                        "write_stdin",
                        {"session_id": 2, "chars": "yes\n", "yield_time_ms": 5000},
                        "w1",
                    )
                ]
            ),
            ScriptedResponse([assistant("talked to it")]),
        ]
    )
    harness.unified_exec = True
    app = harness.app(prompt="run them")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: "\none\ntwo" in cell(app, f"$ {live_cmd}"))
        assert cell(app, f"$ {live_cmd}") == f"$ {live_cmd}\none\ntwo\n⋯ running"
        (harness.work / "go").touch()
        await wait_for(pilot, lambda: idle(app) and "talked to it" in app.transcript_lines())
        cells = [
            without_duration(cell(app, title))
            for title in (f"$ {live_cmd}", f"$ {ask_cmd}", '↳ session 2 ← "yes\\n"')
        ]
    assert cells == [
        f"$ {live_cmd}\none\ntwo\nthree\n✓ exit 0 · N.Ns",
        f"$ {ask_cmd}\nstarted\n● still running · session 2 · N.Ns",
        '↳ session 2 ← "yes\\n"\ngot yes\n✓ exit 0 · N.Ns',
    ]


async def test_an_interrupted_command_keeps_the_output_it_printed(make_harness) -> None:
    command = f"echo compiling; echo linking; {WAIT_FOR_GO}"
    harness = make_harness(
        [
            ScriptedResponse([function_call("shell", {"command": command}, "slow")]),
            ScriptedResponse([assistant("back")]),
        ]
    )
    app = harness.app(prompt="build")
    title = f"$ {command}"
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: "\nlinking\n" in cell(app, title))
        await pilot.press("escape")
        await wait_for(pilot, lambda: idle(app) and "■ turn interrupted" in app.transcript_lines())
        text = without_duration(cell(app, title))
    shown = re.sub(r"Wall time: \d+\.\d seconds", "Wall time: N seconds", text)
    aborted = ["Wall time: N seconds", "aborted by user", "✗ no exit code · N.Ns"]
    assert shown == "\n".join([title, "compiling", "linking", *aborted])
