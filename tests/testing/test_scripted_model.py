"""ScriptedModel: exact event sequences, recorded prompts, ids, running out, failure injection."""

from __future__ import annotations

import anyio
import pytest

from mini_codex.errors import ModelError
from mini_codex.models import (
    Completed,
    Created,
    ModelClient,
    ModelEvent,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    Prompt,
    ReasoningSummaryDelta,
    RetryPolicy,
    StreamError,
    TokenUsage,
    ToolCallInputDelta,
    stream_closed_early,
)
from mini_codex.protocol import (
    CustomToolCall,
    FunctionCall,
    Message,
    OutputText,
    Reasoning,
    UnknownItem,
    user_message,
)
from mini_codex.testing import (
    ScriptedFailure,
    ScriptedModel,
    ScriptedResponse,
    assistant,
    custom_tool_call,
    function_call,
    reasoning,
)

pytestmark = pytest.mark.anyio


def _prompt(text: str = "hi", *, step: int = 1) -> Prompt:
    return Prompt(
        model="scripted",
        instructions="be brief",
        input=(user_message(text),),
        tools=({"type": "function", "name": "shell", "parameters": {"type": "object"}},),
        turn_id="turn-1",
        step_id=f"step-{step}",
        step_sequence=step,
    )


async def _collect(model: ModelClient, prompt: Prompt) -> list[ModelEvent]:
    return [event async for event in model.stream(prompt)]


async def _collect_until_error(
    model: ModelClient, prompt: Prompt
) -> tuple[list[ModelEvent], BaseException]:
    seen: list[ModelEvent] = []
    try:
        async for event in model.stream(prompt):
            seen.append(event)
    except ModelError as exc:
        return seen, exc
    raise AssertionError(f"stream ended without an error after {seen}")


async def test_message_and_two_function_calls_stream_the_exact_event_sequence() -> None:
    model = ScriptedModel(
        [
            ScriptedResponse(
                [
                    assistant("Running two commands."),
                    function_call("shell", {"command": "ls"}),
                    function_call("shell", '{"command":"pwd"}', call_id="call_given"),
                ],
                end_turn=False,
            )
        ]
    )
    events = await _collect(model, _prompt())
    message = Message(
        role="assistant", content=[OutputText(text="Running two commands.")], id="msg_1_0"
    )
    ls_call = FunctionCall(
        name="shell", arguments='{"command":"ls"}', call_id="call_1_1", id="fc_1_1"
    )
    pwd_call = FunctionCall(
        name="shell", arguments='{"command":"pwd"}', call_id="call_given", id="fc_1_2"
    )
    assert events == [
        Created("resp_1"),
        OutputItemAdded(Message(role="assistant", content=[], id="msg_1_0")),
        OutputTextDelta("msg_1_0", "Running two commands."),
        OutputItemDone(message),
        OutputItemAdded(FunctionCall(name="shell", arguments="", call_id="call_1_1", id="fc_1_1")),
        OutputItemDone(ls_call),
        OutputItemAdded(
            FunctionCall(name="shell", arguments="", call_id="call_given", id="fc_1_2")
        ),
        OutputItemDone(pwd_call),
        Completed("resp_1", usage=None, end_turn=False),
    ]
    assert [e.item.to_json() for e in events if isinstance(e, OutputItemDone)] == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Running two commands."}],
            "id": "msg_1_0",
        },
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":"ls"}',
            "call_id": "call_1_1",
            "id": "fc_1_1",
        },
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":"pwd"}',
            "call_id": "call_given",
            "id": "fc_1_2",
        },
    ]


async def test_reasoning_and_custom_tool_calls_stream_their_bodies_as_deltas() -> None:
    usage = TokenUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    model = ScriptedModel(
        [
            ScriptedResponse(
                [reasoning("Thinking."), custom_tool_call("apply_patch", "*** Begin Patch")],
                usage=usage,
                response_id="resp_custom",
            )
        ]
    )
    events = await _collect(model, _prompt())
    assert events == [
        Created("resp_custom"),
        OutputItemAdded(Reasoning(summary=[], id="rs_1_0")),
        ReasoningSummaryDelta("rs_1_0", "Thinking."),
        OutputItemDone(
            Reasoning(summary=[{"type": "summary_text", "text": "Thinking."}], id="rs_1_0")
        ),
        OutputItemAdded(
            CustomToolCall(name="apply_patch", input="", call_id="call_1_1", id="ctc_1_1")
        ),
        ToolCallInputDelta("call_1_1", "*** Begin Patch"),
        OutputItemDone(
            CustomToolCall(
                name="apply_patch", input="*** Begin Patch", call_id="call_1_1", id="ctc_1_1"
            )
        ),
        Completed("resp_custom", usage=usage, end_turn=None),
    ]


async def test_items_with_ids_and_unknown_items_pass_through_unchanged() -> None:
    given = Message(role="assistant", content=[OutputText(text="a")], id="msg_given")
    unknown = UnknownItem.model_validate({"type": "web_search_call", "status": "completed"})
    model = ScriptedModel([ScriptedResponse([given, unknown])])
    events = await _collect(model, _prompt())
    assert [e.item for e in events if isinstance(e, OutputItemDone)] == [given, unknown]
    assert OutputItemAdded(unknown) in events


async def test_every_prompt_is_recorded_in_request_order() -> None:
    model = ScriptedModel([ScriptedResponse([assistant("one")]), ScriptedResponse([])])
    first, second = _prompt("first", step=1), _prompt("second", step=2)
    await _collect(model, first)
    await _collect(model, second)
    assert model.prompts == [first, second]
    assert model.remaining == 0


async def test_ids_depend_on_the_request_number() -> None:
    model = ScriptedModel([ScriptedResponse([assistant("a")]), ScriptedResponse([assistant("b")])])
    await _collect(model, _prompt())
    events = await _collect(model, _prompt())
    assert events[0] == Created("resp_2")
    assert events[-2] == OutputItemDone(
        Message(role="assistant", content=[OutputText(text="b")], id="msg_2_0")
    )


async def test_running_out_of_script_is_a_clear_non_retryable_error() -> None:
    model = ScriptedModel([ScriptedResponse([assistant("only")])])
    await _collect(model, _prompt())
    with pytest.raises(ModelError) as raised:
        await _collect(model, _prompt("again"))
    assert str(raised.value) == (
        "scripted: scripted model has no response left for request #2 (script has 1 responses)"
    )
    assert raised.value.retryable is False
    assert RetryPolicy().should_retry(raised.value, 0) is False
    assert len(model.prompts) == 2


async def test_request_is_sent_only_when_iteration_starts() -> None:
    model = ScriptedModel([ScriptedResponse([assistant("x")])])
    stream = model.stream(_prompt())
    assert (model.prompts, model.remaining) == ([], 1)
    assert await anext(stream) == Created("resp_1")
    assert (len(model.prompts), model.remaining) == (1, 0)
    await stream.aclose()  # type: ignore[attr-defined]


async def test_failure_without_output_raises_before_created_and_consumes_its_slot() -> None:
    error = StreamError("connection reset", retry_after_s=0.5)
    model = ScriptedModel([ScriptedFailure(error), ScriptedResponse([assistant("ok")])])
    seen, raised = await _collect_until_error(model, _prompt())
    assert (seen, raised) == ([], error)
    events = await _collect(model, _prompt())
    assert events[0] == Created("resp_2")
    assert model.remaining == 0


async def test_failure_after_items_streams_them_then_raises_like_a_cut_stream() -> None:
    error = stream_closed_early()
    model = ScriptedModel(
        [ScriptedFailure(error, [assistant("partial"), function_call("shell", {"command": "ls"})])]
    )
    seen, raised = await _collect_until_error(model, _prompt())
    assert raised is error
    assert seen == [
        Created("resp_1"),
        OutputItemAdded(Message(role="assistant", content=[], id="msg_1_0")),
        OutputTextDelta("msg_1_0", "partial"),
        OutputItemDone(
            Message(role="assistant", content=[OutputText(text="partial")], id="msg_1_0")
        ),
        OutputItemAdded(FunctionCall(name="shell", arguments="", call_id="call_1_1", id="fc_1_1")),
        OutputItemDone(
            FunctionCall(
                name="shell", arguments='{"command":"ls"}', call_id="call_1_1", id="fc_1_1"
            )
        ),
    ]
    assert not any(isinstance(event, Completed) for event in seen)


async def test_streaming_yields_to_the_event_loop_so_it_can_be_cancelled() -> None:
    model = ScriptedModel([ScriptedResponse([assistant(str(n)) for n in range(50)])])
    seen: list[ModelEvent] = []
    with anyio.CancelScope() as scope:
        async for event in model.stream(_prompt()):
            seen.append(event)
            if len(seen) == 3:
                scope.cancel()
    assert scope.cancelled_caught
    assert len(seen) == 3


async def test_closed_model_refuses_requests() -> None:
    model = ScriptedModel([ScriptedResponse([assistant("x")])])
    await model.aclose()
    with pytest.raises(ModelError, match="scripted: model client is closed"):
        await _collect(model, _prompt())
    assert model.remaining == 1


def test_helpers_build_the_expected_items() -> None:
    assert function_call("shell", {"command": ["bash", "-lc", "ls"]}).to_json() == {
        "type": "function_call",
        "name": "shell",
        "arguments": '{"command":["bash","-lc","ls"]}',
        "call_id": "",
    }
    assert custom_tool_call("apply_patch", "patch", call_id="c1").to_json() == {
        "type": "custom_tool_call",
        "name": "apply_patch",
        "input": "patch",
        "call_id": "c1",
    }
    assert reasoning("why").to_json() == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "why"}],
    }
    assert assistant("done").to_json() == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "done"}],
    }
