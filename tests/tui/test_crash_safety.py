"""An unhandled error in the UI closes the session cleanly: the rollout keeps every line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from mini_codex.cli.main import app as cli
from mini_codex.protocol import EventMsgLine
from mini_codex.protocol.events import TaskComplete
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.testing import ScriptedResponse, assistant
from mini_codex.tui.run import run_ui

pytestmark = pytest.mark.anyio


class UiBug(Exception):
    pass


async def test_an_unhandled_ui_error_still_flushes_and_closes_the_rollout(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("the answer")])])
    app = harness.app(prompt="question")
    handle = app.handle_event

    def broken(event: SessionEvent) -> None:
        handle(event)
        if isinstance(event, TaskComplete):
            raise UiBug("a bug in the UI")

    app.handle_event = broken  # type: ignore[method-assign]
    code = await run_ui(app, inline=False, headless=True)
    assert code == 1  # Textual reports the error and exits
    path = harness.sessions[0].rollout_path
    lines = read_rollout(path).lines
    assert any(
        isinstance(line, EventMsgLine) and isinstance(line.payload, TaskComplete) for line in lines
    )
    verified = CliRunner().invoke(cli, ["rollout", "verify", str(path)])
    assert verified.exit_code == 0, verified.output
    assert verified.output.startswith("ok: ")
