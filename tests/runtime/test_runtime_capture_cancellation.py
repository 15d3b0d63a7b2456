"""Cancelling a step capture at each of its awaits (DESIGN §3, I9; spec/codex-runtime.md §2.4,
§3.4): nothing of the step is published, the user input is still recorded in history and rollout,
a ``turn_aborted`` event is written, and the session runs the next turn normally.

``SessionOptions.capture_probe`` is awaited before each await of a capture with the phase name;
the probe interrupts the session there, so the cancellation lands exactly at that await.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace
from runtime_harness import Run, SleepTool, describe_rollout, layout, open_session

from mini_codex.protocol import TaskComplete, TurnAborted
from mini_codex.protocol.session_events import ErrorEvent, StepStarted
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.runtime.capture import CAPTURE_PHASES
from mini_codex.runtime.tool_router import ToolCollisionError
from mini_codex.testing import ScriptedResponse, assistant, function_call

pytestmark = pytest.mark.anyio


class Interrupter:
    """A capture probe that interrupts the session at ``phase`` of capture number ``capture``."""

    def __init__(self, phase: str, capture: int) -> None:
        self.phase = phase
        self.capture = capture
        self.captures = 0
        self.run: Run | None = None
        self.fired = False

    async def __call__(self, phase: str) -> None:
        if phase == CAPTURE_PHASES[0]:
            self.captures += 1
        if phase == self.phase and self.captures == self.capture and not self.fired:
            self.fired = True
            assert self.run is not None
            self.run.session.interrupt()


def test_the_capture_phases_are_the_documented_order() -> None:
    assert CAPTURE_PHASES == ("environments", "agents_md", "sandbox", "workspace", "mcp", "tools")


@pytest.mark.parametrize("phase", CAPTURE_PHASES)
async def test_cancelling_the_first_capture_records_the_input_and_publishes_no_step(
    tmp_path: Path, phase: str
) -> None:
    probe = Interrupter(phase, capture=1)
    script = [ScriptedResponse([assistant("back again")])]
    async with open_session(tmp_path, script, probe=probe) as run:
        probe.run = run
        assert await run.session.run_turn("first try") is None
        assert probe.fired

        # Nothing of the step: no request, no step event, no context, no world state.
        assert run.prompts == []
        assert run.events_of(StepStarted) == []
        # I9: the input is in history and rollout, followed by the abort marker.
        assert layout(run.session.history.items) == [
            "message/user:first try",
            "message/user:<turn_aborted>",
        ]
        assert describe_rollout(run.rollout()) == [
            "session_meta",
            "event task_started",
            "item message/user:first try",
            "event user_message",
            "item message/user:<turn_aborted>",
            "event turn_aborted",
        ]
        (aborted,) = run.events_of(TurnAborted)
        assert aborted.reason == "interrupted"
        assert run.events_of(TaskComplete) == []

        # The session is usable: the next turn records the full context and runs.
        assert await run.session.run_turn("second try") == "back again"

    (prompt,) = run.prompts
    assert layout(prompt.input) == [
        "message/user:first try",
        "message/user:<turn_aborted>",
        "message/developer[2]: | [01] <permissions instructions> | [02] <tool_namespaces>",
        "message/user[2]: | [01] <environment_context> | [02] <workspace_files>",
        "message/user:second try",
    ]
    assert check_rollout(run.rollout()).violations == []


@pytest.mark.parametrize("phase", CAPTURE_PHASES)
async def test_cancelling_a_later_capture_keeps_the_finished_step_and_adds_nothing(
    tmp_path: Path, phase: str
) -> None:
    probe = Interrupter(phase, capture=2)
    script = [
        ScriptedResponse([function_call("work", {}, "call_work")]),
        ScriptedResponse([assistant("next turn answer")]),
    ]
    async with open_session(tmp_path, script, tools=[SleepTool("work")], probe=probe) as run:
        probe.run = run
        assert await run.session.run_turn("do work") is None
        assert probe.fired

        assert len(run.prompts) == 1
        assert [e.sequence for e in run.events_of(StepStarted)] == [1]
        assert layout(run.session.history.items)[2:] == [
            "message/user:do work",
            "function_call/work",
            "function_call_output:work done",
            "message/user:<turn_aborted>",
        ]
        tail = describe_rollout(run.rollout())[6:]
        assert tail == [
            "item message/user:do work",
            "event user_message",
            "item function_call/work",
            "item function_call_output:work done",
            "item message/user:<turn_aborted>",
            "event turn_aborted",
        ]

        assert await run.session.run_turn("continue") == "next turn answer"

    assert layout(run.prompts[1].input)[-2:] == [
        "message/user:<turn_aborted>",
        "message/user:continue",
    ]
    assert check_rollout(run.rollout()).violations == []


async def test_a_tool_collision_fails_the_capture_records_the_input_and_keeps_the_session(
    tmp_path: Path,
) -> None:
    script = [ScriptedResponse([assistant("fixed")])]
    tools = [SleepTool("twin"), SleepTool("twin")]
    async with open_session(tmp_path, script, tools=tools) as run:
        assert await run.session.run_turn("hello") is None
        assert run.prompts == []
        assert run.events_of(StepStarted) == []
        (error,) = run.events_of(ErrorEvent)
        assert error.message == f"turn failed: {ToolCollisionError('functions.twin')}"
        assert layout(run.session.history.items) == ["message/user:hello"]

        run.session.capture = replace(run.session.capture, tools=run.session.capture.tools[:1])
        assert await run.session.run_turn("again") == "fixed"

    assert layout(run.prompts[0].input)[0] == "message/user:hello"
    assert check_rollout(run.rollout()).violations == []
