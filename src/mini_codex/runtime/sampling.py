"""One sampling request of a step, with retries (spec/codex-runtime.md §4).

* The prompt is the history for the prompt plus the step's model-visible tool specs.
* Retries reuse the same step and router and re-read history, so items and tool outputs recorded by
  a failed attempt are part of the retry prompt. Retryable errors back off 200 ms × 2^(n−1) ± 10 %
  capped at the policy's ``max_backoff_s`` (or the server's Retry-After); context-window and
  usage-limit errors are never retried. Other exceptions end the request unretried.
* Tool calls start when their item arrives; their call item is recorded before they run (I8); the
  outputs are recorded in call order after the stream ends, even when it failed or was cancelled;
  a request cancelled meanwhile ends right after that.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import anyio
import msgspec

from mini_codex.context.lazy import PromptItems
from mini_codex.errors import ModelError
from mini_codex.models.base import (
    Completed,
    ModelClient,
    OutputItemDone,
    OutputTextDelta,
    Prompt,
    ReasoningSummaryDelta,
    TokenUsage,
)
from mini_codex.models.errors import StreamError
from mini_codex.models.retry import RetryPolicy
from mini_codex.protocol import (
    CustomToolCall,
    FunctionCall,
    Message,
    ResponseItem,
    message_text,
)
from mini_codex.protocol.session_events import (
    AgentMessageDelta,
    ReasoningDelta,
    SessionEvent,
    StreamErrorEvent,
    ToolCallBegin,
    ToolCallEnd,
)
from mini_codex.runtime.contexts import StepContext
from mini_codex.runtime.tool_runtime import ToolCallItem, ToolCallRuntime, call_name
from mini_codex.tools.base import ToolContext, ToolOutput

STREAM_CLOSED_EARLY = "stream closed before response.completed"


class TurnIO(Protocol):
    """What sampling needs from the session: record items, read history, emit events."""

    async def record_items(self, items: Sequence[ResponseItem]) -> None: ...

    def history_for_prompt(self) -> Sequence[ResponseItem]: ...

    def emit(self, event: SessionEvent) -> None: ...


class SamplingOutcome(msgspec.Struct, frozen=True):
    needs_follow_up: bool
    last_agent_message: str | None
    usage: TokenUsage | None


def build_prompt(step: StepContext, history: Sequence[ResponseItem]) -> Prompt:
    turn = step.turn
    return Prompt(
        model=turn.model,
        instructions=turn.base_instructions,
        input=history if isinstance(history, PromptItems | tuple) else tuple(history),
        tools=step.router.model_visible_specs(),
        parallel_tool_calls=True,
        reasoning_effort=turn.reasoning_effort,
        reasoning_summary=turn.reasoning_summary,
        turn_id=turn.turn_id,
        step_id=step.step_id,
        step_sequence=step.sequence,
        output_schema=turn.output_schema,
    )


def tool_context(step: StepContext, call: ToolCallItem) -> ToolContext:
    turn = step.turn
    return ToolContext(
        cwd=turn.cwd,
        sandbox=turn.sandbox,
        call_id=call.call_id,
        turn_id=turn.turn_id,
        step_id=step.step_id,
        shell=turn.session.shell,
        env=turn.session.env,
        never_writable=turn.session.never_writable,
        sandbox_backend=step.sandbox,
        allow_unsandboxed=turn.session.config.sandbox.allow_unsandboxed,
        approval_policy=turn.approval_policy,
        approvals=turn.session.approvals,
        environments=step.environment_snapshot,
    )


async def run_sampling_request(
    step: StepContext,
    client: ModelClient,
    io: TurnIO,
    *,
    policy: RetryPolicy,
    on_request: Callable[[Prompt], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    jitter: Callable[[], float] = lambda: random.uniform(0.9, 1.1),
) -> SamplingOutcome:
    """Sample once for ``step``, retrying retryable model errors per ``policy``."""
    retries = 0
    while True:
        prompt = build_prompt(step, io.history_for_prompt())
        if on_request is not None:
            on_request(prompt)
        try:
            return await _try_sampling_request(step, client, io, prompt)
        except ModelError as err:
            if not policy.should_retry(err, retries):
                raise
            retries += 1
            await pause_before_retry(policy, err, retries, io.emit, sleep, jitter())


async def pause_before_retry(
    policy: RetryPolicy,
    err: ModelError,
    attempt: int,
    emit: Callable[[StreamErrorEvent], None],
    sleep: Callable[[float], Awaitable[None]],
    jitter: float,
) -> None:
    """Tell the user retry ``attempt`` is coming ("Reconnecting... n/N"), then wait its delay."""
    delay = policy.delay_s(err, attempt, jitter)
    emit(
        StreamErrorEvent(
            message=f"Reconnecting... {attempt}/{policy.max_retries} ({err})",
            attempt=attempt,
            max_retries=policy.max_retries,
            delay_s=delay,
        )
    )
    await sleep(delay)


async def _try_sampling_request(
    step: StepContext, client: ModelClient, io: TurnIO, prompt: Prompt
) -> SamplingOutcome:
    error: Exception | None = None
    outcome: SamplingOutcome | None = None

    def on_begin(call: ToolCallItem) -> None:
        payload = call.input if isinstance(call, CustomToolCall) else call.arguments
        io.emit(
            ToolCallBegin(
                call_id=call.call_id, name=call_name(call), step_id=step.step_id, payload=payload
            )
        )

    def on_end(call: ToolCallItem, output: ToolOutput, duration: float) -> None:
        io.emit(
            ToolCallEnd(
                call_id=call.call_id,
                name=call_name(call),
                output=output.text,
                success=output.success,
                duration_s=duration,
                **({"details": dict(output.details)} if output.details is not None else {}),
            )
        )

    async with anyio.create_task_group() as tg:
        runtime = ToolCallRuntime(
            step.router,
            lambda call: tool_context(step, call),
            tg,
            on_begin=on_begin,
            on_end=on_end,
            on_output_delta=io.emit,
            unavailable=step.mcp.pending if step.mcp is not None else None,
        )
        try:
            outcome = await _consume_stream(client, io, prompt, runtime)
        except Exception as exc:  # raised below, outside the task group (never grouped)
            error = exc
        finally:
            # Outputs are recorded in call order, also after a failed or cancelled stream.
            with anyio.CancelScope(shield=True):
                await runtime.wait_all()
                outputs = runtime.outputs()
                if outputs:
                    await io.record_items(outputs)
    # A request cancelled while its tools drained ends here, not in the next step (§4.3).
    await anyio.lowlevel.checkpoint_if_cancelled()
    if error is not None:
        raise error
    assert outcome is not None
    return outcome


async def _consume_stream(
    client: ModelClient, io: TurnIO, prompt: Prompt, runtime: ToolCallRuntime
) -> SamplingOutcome:
    needs_follow_up = False
    last_agent_message: str | None = None
    async for event in client.stream(prompt):
        match event:
            case OutputTextDelta(delta=delta):
                io.emit(AgentMessageDelta(delta=delta))
            case ReasoningSummaryDelta(delta=delta):
                io.emit(ReasoningDelta(delta=delta))
            case OutputItemDone(item=item):
                # I8: the call item is recorded before the tool runs.
                await io.record_items([item])
                if isinstance(item, FunctionCall | CustomToolCall):
                    runtime.handle_tool_call(item)
                    needs_follow_up = True
                elif isinstance(item, Message) and item.role == "assistant":
                    text = message_text(item)
                    if text and getattr(item, "phase", None) != "commentary":
                        last_agent_message = text
            case Completed(usage=usage, end_turn=end_turn):
                if end_turn is False:
                    needs_follow_up = True
                return SamplingOutcome(needs_follow_up, last_agent_message, usage)
            case _:
                pass
    raise StreamError(STREAM_CLOSED_EARLY)
