"""Sampling retries and errors (spec/codex-runtime.md §4.2, §4.4, §11.7–§11.8).

* A retry reuses the same step (id, sequence, router, tools) and re-reads history, so what the
  failed attempt recorded (items, tool outputs) is in the retry prompt, exactly once.
* Context-window, usage-limit and other non-retryable errors end the turn with an error event; the
  session stays usable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from runtime_harness import SleepTool, describe_rollout, layout, open_session

from mini_codex.errors import ModelError
from mini_codex.models.base import Created, ModelEvent, Prompt
from mini_codex.models.errors import (
    CONTEXT_WINDOW_EXCEEDED_MESSAGE,
    ContextWindowExceeded,
    InvalidRequest,
    RateLimited,
    ServerError,
    StreamError,
    UsageLimitReached,
)
from mini_codex.models.retry import DEFAULT_MAX_BACKOFF_S, RetryPolicy
from mini_codex.protocol import TaskComplete
from mini_codex.protocol.session_events import ErrorEvent, StepStarted, StreamErrorEvent
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.runtime.capture import capture_step
from mini_codex.runtime.sampling import run_sampling_request
from mini_codex.testing import (
    ScriptedFailure,
    ScriptedModel,
    ScriptedResponse,
    ScriptStep,
    assistant,
    function_call,
)

pytestmark = pytest.mark.anyio


async def test_a_retry_reuses_the_step_and_rereads_history(tmp_path: Path) -> None:
    cut = StreamError("stream cut", retry_after_s=0.01)
    script = [
        ScriptedFailure(cut, [assistant("let me look"), function_call("look", {}, "call_look")]),
        ScriptedResponse([assistant("found it")]),
    ]
    tool = SleepTool("look")
    captures: list[str] = []

    async def probe(phase: str) -> None:
        captures.append(phase)

    async with open_session(tmp_path, script, tools=[tool], probe=probe) as run:
        assert await run.session.run_turn("find it") == "found it"

    failed, retried = run.prompts
    assert (retried.step_id, retried.step_sequence) == (failed.step_id, failed.step_sequence)
    assert retried.tools == failed.tools
    assert captures.count("environments") == 1
    assert [e.sequence for e in run.events_of(StepStarted)] == [1]
    # The failed attempt's items and the tool output it produced are in the retry prompt.
    assert layout(retried.input) == [
        *layout(failed.input),
        "message/assistant:let me look",
        "function_call/look",
        "function_call_output:look done",
    ]
    assert tool.log[0].step_id == failed.step_id
    # Nothing is recorded twice.
    assert layout(run.session.history.items)[2:] == [
        "message/user:find it",
        "message/assistant:let me look",
        "function_call/look",
        "function_call_output:look done",
        "message/assistant:found it",
    ]
    (notice,) = run.events_of(StreamErrorEvent)
    assert (notice.attempt, notice.max_retries, notice.delay_s) == (1, 5, 0.01)
    assert notice.message == "Reconnecting... 1/5 (stream cut)"
    assert run.events_of(ErrorEvent) == []
    assert check_rollout(run.rollout()).violations == []


async def test_retries_stop_after_the_configured_maximum_with_an_error_event(
    tmp_path: Path,
) -> None:
    script = [ScriptedFailure(ServerError("busy", retry_after_s=0.0)) for _ in range(6)]
    script.append(ScriptedResponse([assistant("later")]))
    async with open_session(tmp_path, script) as run:
        assert await run.session.run_turn("hi") is None
        assert len(run.prompts) == 6
        assert len({p.step_id for p in run.prompts}) == 1
        assert [e.attempt for e in run.events_of(StreamErrorEvent)] == [1, 2, 3, 4, 5]
        assert [e.message for e in run.events_of(ErrorEvent)] == ["busy"]

        assert await run.session.run_turn("again") == "later"


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (ContextWindowExceeded(), CONTEXT_WINDOW_EXCEEDED_MESSAGE),
        (UsageLimitReached(), UsageLimitReached.DEFAULT_MESSAGE),
        (InvalidRequest("bad tool schema"), "bad tool schema"),
    ],
)
async def test_non_retryable_errors_end_the_turn_with_an_error_and_the_session_stays_usable(
    tmp_path: Path, error: ModelError, message: str
) -> None:
    script = [ScriptedFailure(error), ScriptedResponse([assistant("recovered")])]
    async with open_session(tmp_path, script) as run:
        assert await run.session.run_turn("too much") is None
        assert len(run.prompts) == 1
        assert run.events_of(StreamErrorEvent) == []
        turn_id = run.prompts[0].turn_id
        assert run.events_of(ErrorEvent) == [ErrorEvent(message=message, turn_id=turn_id)]
        assert run.events_of(TaskComplete) == [
            TaskComplete(turn_id=turn_id, last_agent_message=None)
        ]

        assert await run.session.run_turn("smaller") == "recovered"

    assert layout(run.prompts[1].input)[2:] == ["message/user:too much", "message/user:smaller"]
    assert describe_rollout(run.rollout())[6:] == [
        "item message/user:too much",
        "event user_message",
        "event task_complete",
        "event task_started",
        "turn_context",
        "item message/user:smaller",
        "event user_message",
        "item message/assistant:recovered",
        "event task_complete",
    ]
    assert check_rollout(run.rollout()).violations == []


async def test_running_out_of_script_is_an_error_event_not_a_crash(tmp_path: Path) -> None:
    async with open_session(tmp_path, []) as run:
        assert await run.session.run_turn("anything") is None
    (error,) = run.events_of(ErrorEvent)
    assert "scripted model has no response left for request #1" in error.message


async def test_backoff_doubles_is_capped_and_a_server_delay_wins(tmp_path: Path) -> None:
    """§4.2: 200 ms × 2^(n−1) (jitter fixed at 1.0 here), capped; Retry-After replaces it."""
    delays: list[float] = []

    async def record_sleep(seconds: float) -> None:
        delays.append(seconds)

    script: list[ScriptStep] = [ScriptedFailure(ServerError("busy")) for _ in range(10)]
    script.append(ScriptedFailure(RateLimited("slow down", retry_after_s=90.0)))
    script.append(ScriptedResponse([assistant("finally")]))
    model = ScriptedModel(script)
    async with open_session(tmp_path, []) as run:
        step, _ = await capture_step(
            run.session.new_turn_context(), run.session.capture, run.session.caches, 1
        )
        outcome = await run_sampling_request(
            step,
            model,
            run.session.recording,
            policy=RetryPolicy(max_retries=11),
            sleep=record_sleep,
            jitter=lambda: 1.0,
        )
    assert outcome.last_agent_message == "finally"
    assert delays == pytest.approx(
        [0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, DEFAULT_MAX_BACKOFF_S, 90.0]
    )
    assert len({prompt.step_id for prompt in model.prompts}) == 1


@dataclass
class BrokenClient:
    """A provider adapter with a bug: the stream raises a plain exception after ``Created``."""

    prompts: int = 0

    async def aclose(self) -> None:
        return None

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        self.prompts += 1
        yield Created("resp_broken")
        raise RuntimeError("provider adapter bug")


async def test_a_client_bug_is_an_error_event_with_its_message_and_the_session_survives(
    tmp_path: Path,
) -> None:
    async with open_session(tmp_path, [ScriptedResponse([assistant("fine")])]) as run:
        scripted = run.session.client
        broken = BrokenClient()
        run.session.client = broken
        assert await run.session.run_turn("first") is None
        run.session.client = scripted
        assert await run.session.run_turn("second") == "fine"

    assert broken.prompts == 1  # not retried: only model errors are
    (error,) = run.events_of(ErrorEvent)
    assert error.message == "turn failed: provider adapter bug"
    assert layout(run.prompts[0].input)[2:] == ["message/user:first", "message/user:second"]


async def test_tool_outputs_are_recorded_when_the_stream_then_fails_for_good(
    tmp_path: Path,
) -> None:
    tool = SleepTool("look", delay=0.05)
    script = [ScriptedFailure(ContextWindowExceeded(), [function_call("look", {}, "c1")])]
    async with open_session(tmp_path, script, tools=[tool]) as run:
        assert await run.session.run_turn("look") is None

    assert layout(run.session.history.items)[2:] == [
        "message/user:look",
        "function_call/look",
        "function_call_output:look done",
    ]
    assert [e.message for e in run.events_of(ErrorEvent)] == [CONTEXT_WINDOW_EXCEEDED_MESSAGE]
    assert check_rollout(run.rollout()).violations == []


async def test_an_interrupt_during_the_retry_backoff_aborts_without_another_request(
    tmp_path: Path,
) -> None:
    script = [ScriptedFailure(ServerError("busy", retry_after_s=60.0))]
    async with open_session(tmp_path, script) as run:
        with run.session.subscribe() as events, anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run.session.run_turn, "hi")
                async for event in events:
                    if isinstance(event, StreamErrorEvent):
                        run.session.interrupt()
                        break

    assert len(run.prompts) == 1
    assert run.events_of(ErrorEvent) == []
    assert describe_rollout(run.rollout())[-2:] == [
        "item message/user:<turn_aborted>",
        "event turn_aborted",
    ]
