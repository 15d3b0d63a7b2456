"""Which step serves which request (spec/codex-runtime.md §3.2, §11.2–§11.4).

* The first request of a turn reuses the step captured at turn start unless pending input arrived.
* Pending input forces a new capture (new step id, next sequence) and is in that request.
* Pending input is not drained on the first iteration of a turn that has input.
* Follow-up happens for tool calls, ``end_turn == false`` and pending input.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from pathlib import Path

import anyio
import pytest
from msgspec.structs import replace
from runtime_harness import Run, SleepTool, layout, open_session

from mini_codex.protocol import TaskComplete, TaskStarted, TurnAborted
from mini_codex.protocol.session_events import SessionEvent, StepStarted
from mini_codex.runtime.capture import CAPTURE_PHASES
from mini_codex.runtime.session import (
    EmptyInputError,
    ExpectedTurnMismatchError,
    NoActiveTurnError,
)
from mini_codex.testing import ScriptedResponse, assistant, function_call
from mini_codex.tools.base import ToolContext

pytestmark = pytest.mark.anyio


def counted_ids(run: Run) -> list[str]:
    """Make the session's step ids ``step-1``, ``step-2``, ...; returns the issued ids."""
    issued: list[str] = []
    numbers: Iterator[int] = count(1)

    def new_id() -> str:
        issued.append(f"step-{next(numbers)}")
        return issued[-1]

    run.session.capture = replace(run.session.capture, new_id=new_id)
    return issued


async def test_without_pending_input_the_first_request_uses_the_turn_start_step(
    tmp_path: Path,
) -> None:
    async with open_session(tmp_path, [ScriptedResponse([assistant("hi")])]) as run:
        issued = counted_ids(run)
        assert await run.session.run_turn("hello") == "hi"

    assert issued == ["step-1"]
    (prompt,) = run.prompts
    assert (prompt.step_id, prompt.step_sequence) == ("step-1", 1)
    assert [(e.step_id, e.sequence) for e in run.events_of(StepStarted)] == [("step-1", 1)]


async def test_pending_input_at_the_first_iteration_forces_a_new_capture(tmp_path: Path) -> None:
    """A turn started without input drains pending input at once, and recaptures for it."""
    steered: list[bool] = []
    holder: list[Run] = []

    async def probe(phase: str) -> None:
        # Steer once, while the turn-start step is being captured (its last phase).
        if phase == CAPTURE_PHASES[-1] and not steered:
            steered.append(True)
            holder[0].session.steer("steered in")

    async with open_session(tmp_path, [ScriptedResponse([assistant("ok")])], probe=probe) as run:
        holder.append(run)
        issued = counted_ids(run)
        assert await run.session.run_turn([]) == "ok"

    assert issued == ["step-1", "step-2"]
    (prompt,) = run.prompts
    assert (prompt.step_id, prompt.step_sequence) == ("step-2", 2)
    assert layout(prompt.input)[2:] == ["message/user:steered in"]
    assert [(e.step_id, e.sequence) for e in run.events_of(StepStarted)] == [("step-2", 2)]


async def test_input_steered_during_the_first_capture_waits_for_the_second_request(
    tmp_path: Path,
) -> None:
    """With turn input, the first iteration does not drain: the steer follows up on a new step."""
    steered: list[bool] = []
    holder: list[Run] = []

    async def probe(phase: str) -> None:
        if phase == "tools" and not steered:
            steered.append(True)
            holder[0].session.steer("also this")

    script = [ScriptedResponse([assistant("first")]), ScriptedResponse([assistant("second")])]
    async with open_session(tmp_path, script, probe=probe) as run:
        holder.append(run)
        issued = counted_ids(run)
        assert await run.session.run_turn("task") == "second"

    assert issued == ["step-1", "step-2"]
    first, second = run.prompts
    assert (first.step_id, second.step_id) == ("step-1", "step-2")
    assert layout(first.input)[2:] == ["message/user:task"]
    assert layout(second.input)[2:] == [
        "message/user:task",
        "message/assistant:first",
        "message/user:also this",
    ]


async def test_steering_while_a_tool_runs_reaches_the_next_request_on_a_new_step(
    tmp_path: Path,
) -> None:
    holder: list[Run] = []

    async def steer_now(ctx: ToolContext) -> None:
        holder[0].session.steer("use tabs")

    tool = SleepTool("work", on_start=steer_now)
    script = [
        ScriptedResponse([function_call("work", {}, "call_work")]),
        ScriptedResponse([assistant("done with tabs")]),
    ]
    async with open_session(tmp_path, script, tools=[tool]) as run:
        holder.append(run)
        issued = counted_ids(run)
        assert await run.session.run_turn("format it") == "done with tabs"

    assert issued == ["step-1", "step-2"]
    first, second = run.prompts
    assert tool.log[0].step_id == first.step_id == "step-1"
    assert (second.step_id, second.step_sequence) == ("step-2", 2)
    assert layout(second.input)[2:] == [
        "message/user:format it",
        "function_call/work",
        "function_call_output:work done",
        "message/user:use tabs",
    ]


async def test_follow_up_rules_tool_calls_and_end_turn_false_continue_the_turn(
    tmp_path: Path,
) -> None:
    script = [
        ScriptedResponse([assistant("thinking")], end_turn=False),
        ScriptedResponse([function_call("work", {}, "call_w")]),
        ScriptedResponse([assistant("all done")], end_turn=True),
    ]
    async with open_session(tmp_path, script, tools=[SleepTool("work")]) as run:
        assert await run.session.run_turn("go") == "all done"

    assert [p.step_sequence for p in run.prompts] == [1, 2, 3]
    assert len({p.step_id for p in run.prompts}) == 3
    assert run.model.remaining == 0


async def test_a_background_turn_can_be_steered_through_submit(tmp_path: Path) -> None:
    """``submit`` starts a turn when idle and steers it while it runs."""
    tool = SleepTool("wait", delay=0.2)
    script = [
        ScriptedResponse([function_call("wait", {}, "call_wait")]),
        ScriptedResponse([assistant("finished")]),
    ]
    async with open_session(tmp_path, script, tools=[tool]) as run:
        with run.session.subscribe() as events:
            run.session.submit("start")
            with anyio.fail_after(10):
                await tool.started.wait()
            assert run.session.turn_active
            run.session.submit("and then this")
            with anyio.fail_after(10):
                async for event in events:
                    if isinstance(event, TaskComplete):
                        break
        assert event == TaskComplete(turn_id=run.prompts[0].turn_id, last_agent_message="finished")

    assert layout(run.prompts[1].input)[-1] == "message/user:and then this"


async def test_two_quick_submits_start_one_turn_and_steer_it(tmp_path: Path) -> None:
    script = [ScriptedResponse([assistant("a")]), ScriptedResponse([assistant("b")])]
    async with open_session(tmp_path, script) as run:
        with run.session.subscribe() as events:
            run.session.submit("one")
            run.session.submit("two")  # the first turn's task has not run yet
            with anyio.fail_after(10):
                async for event in events:
                    if isinstance(event, TaskComplete):
                        break

    assert len(run.events_of(TaskComplete)) == 1
    assert layout(run.session.history.items)[2:] == [
        "message/user:one",
        "message/assistant:a",
        "message/user:two",
        "message/assistant:b",
    ]


async def test_input_steered_after_the_last_request_gets_a_follow_up_turn(
    tmp_path: Path,
) -> None:
    """Steering that the turn can no longer deliver is answered by a turn of its own."""
    steered: list[bool] = []
    holder: list[Run] = []

    def steer_at_the_end(event: SessionEvent) -> None:
        if isinstance(event, TaskComplete) and not steered:
            steered.append(True)
            holder[0].session.steer("too late")

    script = [
        ScriptedResponse([assistant("a")]),
        ScriptedResponse([assistant("b")]),
        ScriptedResponse([assistant("c")]),
    ]
    async with open_session(tmp_path, script, on_event=steer_at_the_end) as run:
        holder.append(run)
        assert await run.session.run_turn("one") == "a"
        # The follow-up turn is running now; run_turn waits for it.
        assert await run.session.run_turn("two") == "c"

    assert [layout(prompt.input)[2:] for prompt in run.prompts] == [
        ["message/user:one"],
        ["message/user:one", "message/assistant:a", "message/user:too late"],
        [
            "message/user:one",
            "message/assistant:a",
            "message/user:too late",
            "message/assistant:b",
            "message/user:two",
        ],
    ]
    assert [e.last_agent_message for e in run.events_of(TaskComplete)] == ["a", "b", "c"]
    assert len({prompt.turn_id for prompt in run.prompts}) == 3


async def test_input_steered_before_an_interrupt_opens_the_next_turn(tmp_path: Path) -> None:
    tool = SleepTool("wait", delay=60)
    script = [
        ScriptedResponse([function_call("wait", {}, "call_wait")]),
        ScriptedResponse([assistant("ok")]),
    ]
    async with open_session(tmp_path, script, tools=[tool]) as run:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run.session.run_turn, "start")
                await tool.started.wait()
                run.session.steer("pending when interrupted")
                run.session.interrupt()
        assert await run.session.run_turn("next") == "ok"

    assert layout(run.prompts[1].input)[-3:] == [
        "message/user:<turn_aborted>",
        "message/user:pending when interrupted",
        "message/user:next",
    ]


async def test_interrupting_a_submitted_turn_before_it_runs_aborts_it(tmp_path: Path) -> None:
    async with open_session(tmp_path, [ScriptedResponse([assistant("later")])]) as run:
        with run.session.subscribe() as events:
            run.session.submit("never sent")
            run.session.interrupt()
            with anyio.fail_after(10):
                async for event in events:
                    if isinstance(event, TurnAborted):
                        break
        assert run.prompts == []
        assert await run.session.run_turn("sent") == "later"
    assert layout(run.prompts[0].input)[:2] == [
        "message/user:never sent",
        "message/user:<turn_aborted>",
    ]


async def test_steering_is_refused_without_an_active_turn_for_another_turn_or_when_empty(
    tmp_path: Path,
) -> None:
    """spec/codex-runtime.md §10 case 13: NoActiveTurn, ExpectedTurnMismatch, EmptyInput."""
    outcomes: list[object] = []
    holder: list[Run] = []

    async def probe(phase: str) -> None:
        if phase != "tools" or outcomes:
            return
        session = holder[0].session
        for attempt in (
            lambda: session.steer("  "),
            lambda: session.steer("x", expected_turn_id="not-this-turn"),
            lambda: session.steer("accepted"),
        ):
            try:
                outcomes.append(attempt())
            except (EmptyInputError, ExpectedTurnMismatchError) as exc:
                outcomes.append(type(exc).__name__)

    script = [ScriptedResponse([assistant("one")]), ScriptedResponse([assistant("two")])]
    async with open_session(tmp_path, script, probe=probe) as run:
        holder.append(run)
        with pytest.raises(NoActiveTurnError):
            run.session.steer("nobody is listening")
        assert await run.session.run_turn("hello") == "two"

    (started,) = [e for e in run.events if isinstance(e, TaskStarted)]
    assert outcomes == ["EmptyInputError", "ExpectedTurnMismatchError", started.turn_id]
    assert layout(run.prompts[1].input)[-1] == "message/user:accepted"
