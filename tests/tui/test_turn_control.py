"""Approvals, interrupts and steering from the keyboard, checked in the rollout."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import idle, type_and_send, wait_for

from mini_codex.protocol import EventMsgLine, FunctionCallOutput, Message, message_text
from mini_codex.protocol.approvals import SafetyDecision
from mini_codex.protocol.events import TurnAborted
from mini_codex.rollout.reader import read_rollout
from mini_codex.testing import ScriptedResponse, assistant, function_call
from mini_codex.tui.run import ui_harness
from mini_codex.tui.screens import ApprovalScreen

pytestmark = pytest.mark.anyio


async def approval_for(pilot, app, call_id: str) -> ApprovalScreen:
    """Wait until the overlay asks about ``call_id`` and is on the screen."""

    def shown() -> bool:
        screen = app.screen
        return (
            isinstance(screen, ApprovalScreen)
            and screen.request.call_id == call_id
            and bool(screen.query("#approval-body"))
        )

    await wait_for(pilot, shown)
    return app.screen


def user_decisions(path: Path) -> list[tuple[str, str]]:
    return [
        (line.payload.call_id, line.payload.decision)
        for line in read_rollout(path).lines
        if isinstance(line, EventMsgLine)
        and isinstance(line.payload, SafetyDecision)
        and line.payload.source == "user"
    ]


def aborted(path: Path) -> bool:
    return any(
        isinstance(line, EventMsgLine) and isinstance(line.payload, TurnAborted)
        for line in read_rollout(path).lines
    )


@pytest.mark.parametrize(
    ("key", "decision", "created"),
    [
        ("y", "approved", True),
        ("a", "approved_for_session", True),
        ("n", "denied", False),
        ("escape", "abort", False),
    ],
)
async def test_each_approval_key(make_harness, key: str, decision: str, created: bool) -> None:
    harness = make_harness(
        [
            ScriptedResponse([function_call("shell", {"command": "touch made.txt"}, "c1")]),
            ScriptedResponse([function_call("shell", {"command": "touch made.txt"}, "c2")]),
            ScriptedResponse([assistant("finished")]),
        ],
        policy="untrusted",
    )
    app = harness.app(prompt="make the file")
    async with ui_harness(app) as pilot:
        screen = await approval_for(pilot, app, "c1")
        body = str(screen.query_one("#approval-body").content)
        assert body.splitlines()[1] == "$ /bin/bash -c 'touch made.txt'"
        assert f"cwd: {harness.work}" in body
        assert "[y] approve once  [a] approve for session  [n] deny  [esc] deny and stop" in body
        await pilot.press(key)
        if key in ("y", "n"):  # the second call asks again; deny it
            await approval_for(pilot, app, "c2")
            await pilot.press("n")
        await wait_for(pilot, lambda: idle(app))
        path = app.session.rollout_path
    assert (harness.work / "made.txt").exists() is created
    expected = {
        "y": [("c1", "approved"), ("c2", "denied")],
        "a": [("c1", "approved_for_session"), ("c2", "run")],  # the second call was not asked
        "n": [("c1", "denied"), ("c2", "denied")],
        "escape": [("c1", "abort")],
    }[key]
    assert user_decisions(path) == expected
    assert aborted(path) is (decision == "abort")


async def test_esc_interrupts_the_turn_and_the_next_prompt_works(make_harness) -> None:
    harness = make_harness(
        [
            ScriptedResponse([function_call("shell", {"command": "sleep 30"}, "slow")]),
            ScriptedResponse([assistant("back again")]),
        ]
    )
    app = harness.app(prompt="wait a while")
    async with ui_harness(app) as pilot:
        await wait_for(
            pilot, lambda: any(x.startswith("$ sleep 30") for x in app.transcript_lines())
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: "■ turn interrupted" in app.transcript_lines())
        await wait_for(pilot, lambda: idle(app))
        await type_and_send(pilot, "next")
        await wait_for(pilot, lambda: "back again" in app.transcript_lines())
        path = app.session.rollout_path
    lines = read_rollout(path).lines
    assert aborted(path)
    outputs = [line.payload for line in lines if isinstance(line.payload, FunctionCallOutput)]
    assert [o.call_id for o in outputs] == ["slow"]
    assert "abort" in outputs[0].output.lower()


async def test_input_typed_during_a_turn_is_queued_and_steers_the_next_step(make_harness) -> None:
    harness = make_harness(
        [
            ScriptedResponse([function_call("shell", {"command": "sleep 4"}, "s1")]),
            ScriptedResponse([assistant("steered")]),
        ]
    )
    app = harness.app(prompt="start")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: any(x.startswith("$ sleep") for x in app.transcript_lines()))
        await type_and_send(pilot, "also add tests")
        queued = str(app.query_one("#queued").content)
        assert queued == "› also add tests  (queued)"
        await wait_for(pilot, lambda: "steered" in app.transcript_lines())
        assert app.query_one("#queued").display is False
        assert "› also add tests" in app.transcript_lines()
    second = harness.model.prompts[1]
    texts = [message_text(i) for i in second.input if isinstance(i, Message) and i.role == "user"]
    assert texts[-1] == "also add tests"
