"""``run_turn``: the step loop of one user turn (spec/codex-runtime.md §3).

Preamble: capture the first step (recording the input even when cancelled there, I9), record the
turn-start context updates, record the user input. Loop: drain pending input (not on the first
iteration of a turn that has input), reuse the first step unless pending input arrived, else
capture a new one; record the step's world-state diff before the request (I7); sample; follow up
while there are tool calls, ``end_turn == false`` or pending input. Errors become events; the
session stays usable. Cancellation records aborted tool outputs, the input and a
``<turn_aborted>`` marker, then the ``turn_aborted`` event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio

from mini_codex.errors import ModelError
from mini_codex.mcp.mentions import mentioned_servers
from mini_codex.models.base import ModelClient, Prompt, TokenUsage
from mini_codex.models.retry import RetryPolicy
from mini_codex.models.tokens import estimate_context_tokens
from mini_codex.protocol import (
    EventMsgLine,
    ResponseItem,
    TaskComplete,
    TaskStarted,
    TokenCount,
    TurnAborted,
    TurnContextItem,
    UserMessageEvent,
    message_text,
    user_message,
)
from mini_codex.protocol.items import Message
from mini_codex.protocol.session_events import ErrorEvent, StepStarted, WarningEvent
from mini_codex.rollout.replay.checkpoint import WindowInfo
from mini_codex.runtime.capture import StepServices, capture_step
from mini_codex.runtime.compaction import (
    CompactionFailed,
    CompactionResult,
    Injection,
    Trigger,
    announce_compaction,
    context_tokens,
    run_compaction,
    token_count_info,
    token_status,
)
from mini_codex.runtime.context_updates import (
    record_context_updates,
    record_step_world_state_if_changed,
)
from mini_codex.runtime.contexts import StepContext, TurnContext
from mini_codex.runtime.recording import Recording
from mini_codex.runtime.sampling import run_sampling_request
from mini_codex.skills.mentions import build_skill_injections, select_skills
from mini_codex.skills.model import SkillSelection
from mini_codex.skills.service import StepSkills

TURN_ABORTED_MARKER = (
    "<turn_aborted>\nThe user interrupted the previous turn; its unfinished work was abandoned."
    "\n</turn_aborted>"
)


@dataclass
class TokenTotals:
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0

    def add(self, usage: TokenUsage) -> None:
        self.input_tokens += usage.input_tokens
        self.cached_input_tokens += usage.cached_input_tokens
        self.output_tokens += usage.output_tokens
        self.reasoning_output_tokens += usage.reasoning_output_tokens
        self.total_tokens += usage.total_tokens

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class TurnState:
    """Session state the active turn reads and advances (one turn runs at a time)."""

    recording: Recording
    reference_context: TurnContextItem | None = None
    previous_model: str | None = None
    pending_input: list[ResponseItem] = field(default_factory=list)
    session_tokens: TokenTotals = field(default_factory=TokenTotals)
    context_tokens: int = 0
    """Active context tokens (spec §8.1): the last response's usage, re-estimated offline when
    the provider reports none and after every history rewrite."""
    window: WindowInfo = field(default_factory=lambda: WindowInfo(number=0))
    checkpoint: Callable[[], Awaitable[None]] | None = None
    """Awaited between steps; writes a rollout checkpoint when one is due."""

    def take_pending(self) -> list[ResponseItem]:
        taken, self.pending_input = self.pending_input, []
        return taken


@dataclass(frozen=True)
class TurnDeps:
    """What ``run_turn`` works with besides the session state: capture services, the model
    client, the retry policy. (Names: ``env`` is a child process's environment, ``environ``
    the whole process environment, ``environments`` the execution environments of a turn.)"""

    services: StepServices
    client: ModelClient
    retry: RetryPolicy
    on_request: Callable[[Prompt], None] | None = None


async def _record_input(state: TurnState, items: Sequence[ResponseItem]) -> None:
    recording = state.recording
    await recording.record_items(items)
    for item in items:
        if isinstance(item, Message) and item.role == "user":
            event = UserMessageEvent(message=message_text(item))
            await recording.record_lines([EventMsgLine(payload=event)])
            recording.emit(event)


async def _inject_skills(
    state: TurnState,
    skills: StepSkills | None,
    items: Sequence[ResponseItem],
    selections: Sequence[SkillSelection] = (),
) -> None:
    """After the input: one ``<skill>`` user message per explicitly used skill (``$name`` in the
    text or a structured selection); a skill that cannot be read is a warning."""
    if skills is None:
        return
    texts = [
        message_text(item) for item in items if isinstance(item, Message) and item.role == "user"
    ]
    chosen, warnings = select_skills(skills.outcome, texts, selections)
    injections = build_skill_injections(chosen)
    for warning in (*warnings, *injections.warnings):
        state.recording.emit(WarningEvent(message=warning))
    if injections.texts:
        await state.recording.record_items([user_message(text) for text in injections.texts])


def _mentioned_mcp_servers(items: Sequence[ResponseItem]) -> frozenset[str]:
    """Servers named as ``mcp://NAME`` in user input: the step waits for them (spec §6.4)."""
    return mentioned_servers(
        message_text(item) for item in items if isinstance(item, Message) and item.role == "user"
    )


async def _persist_event(
    state: TurnState, event: TaskStarted | TaskComplete | TurnAborted | TokenCount
) -> None:
    await state.recording.record_lines([EventMsgLine(payload=event)])
    state.recording.emit(event)


async def run_turn(
    state: TurnState,
    turn: TurnContext,
    user_input: Sequence[ResponseItem],
    deps: TurnDeps,
    *,
    skills: Sequence[SkillSelection] = (),
) -> str | None:
    """Run one turn to completion; returns the last agent message (None on error/abort).

    ``skills``: structured skill inputs of the turn (see ``_inject_skills``)."""
    recording = state.recording
    recording.turn_id = turn.turn_id
    await _persist_event(state, TaskStarted(turn_id=turn.turn_id))
    input_recorded = False
    tokens_unsaved = False  # a pre-turn compaction's token_count waits for the turn's input
    turn_tokens = TokenTotals()
    last_message: str | None = None
    try:
        required_mcp = _mentioned_mcp_servers(user_input)
        first_step, live = await capture_step(
            turn,
            deps.services,
            1,
            required_mcp_servers=required_mcp,
            previous_model=state.previous_model,
        )
        trigger, summarizer = pre_turn_trigger(state, turn)
        if trigger is not None:
            # Before the turn's context updates and input are recorded (spec §8.2), and without
            # injecting: the reference is cleared, so the context update below re-injects the
            # full initial context (a FULL world_state, then turn_context) right before the new
            # input (spec §8.4; the line order Codex 0.169 writes, codex-worldstate.md §10).
            await compact(state, turn, deps, trigger, None, model=summarizer, persist=False)
            tokens_unsaved = True
        update = await record_context_updates(
            recording, live, turn.to_turn_context_item(), state.reference_context
        )
        state.reference_context = update.reference_context
        await _record_input(state, user_input)
        input_recorded = True
        await _inject_skills(state, first_step.skills, user_input, skills)
        if trigger is not None:
            # The active context now holds the re-injected context and the input too.
            state.context_tokens = context_tokens(
                turn.base_instructions, turn.model, recording.history
            )
            await _persist_token_status(state, turn)
            tokens_unsaved = False
        state.previous_model = turn.model

        next_step: StepContext | None = first_step
        sequence = 1
        can_drain = not user_input
        while True:
            pending = state.take_pending() if can_drain else []
            if pending:
                await _record_input(state, pending)
                await _inject_skills(state, first_step.skills, pending)
                required_mcp |= _mentioned_mcp_servers(pending)
            if state.checkpoint is not None:
                await state.checkpoint()
            if next_step is not None and not pending:
                step = next_step
                world_state = live
            else:
                sequence += 1
                step, world_state = await capture_step(
                    turn,
                    deps.services,
                    sequence,
                    required_mcp_servers=required_mcp,
                    previous_model=state.previous_model,
                )
            next_step = None
            changed = await record_step_world_state_if_changed(recording, live, world_state)
            live = world_state
            recording.emit(
                StepStarted(
                    turn_id=turn.turn_id,
                    step_id=step.step_id,
                    sequence=step.sequence,
                    world_state_changed=changed,
                )
            )
            try:
                outcome = await run_sampling_request(
                    step, deps.client, recording, policy=deps.retry, on_request=deps.on_request
                )
            except ModelError as err:
                recording.emit(ErrorEvent(message=str(err), turn_id=turn.turn_id))
                break
            status = token_status(turn.model, turn.session.config)
            if outcome.usage is not None:
                turn_tokens.add(outcome.usage)
                state.session_tokens.add(outcome.usage)
                state.context_tokens = outcome.usage.total_tokens
            elif status.limit is not None:  # estimated only where a limit can be reached
                state.context_tokens = estimate_context_tokens(
                    turn.base_instructions,
                    step.router.model_visible_specs(),
                    recording.history.for_prompt(),
                    turn.model,
                )
            if outcome.usage is not None:
                await _persist_event(
                    state,
                    TokenCount(
                        info=token_count_info(
                            state.session_tokens.to_json(),
                            turn_tokens.to_json(),
                            outcome.usage.to_json(),
                            status,
                            state.context_tokens,
                        )
                    ),
                )
            needs_follow_up = outcome.needs_follow_up or bool(state.pending_input)
            if needs_follow_up and status.reached(state.context_tokens):
                # Mid-turn compaction (spec §8.2): the turn continues in the new window.
                await compact(
                    state, turn, deps, "mid_turn", Injection(live, turn.to_turn_context_item())
                )
                can_drain = not outcome.needs_follow_up
                continue
            can_drain = True
            if not (outcome.needs_follow_up or state.pending_input):
                last_message = outcome.last_agent_message
                break
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            if not input_recorded:
                await _record_input(state, user_input)
            if tokens_unsaved:  # a resume must not see the pre-compaction context size
                await _persist_token_status(state, turn)
            await recording.record_items([user_message(TURN_ABORTED_MARKER)])
            await _persist_event(state, TurnAborted(turn_id=turn.turn_id, reason="interrupted"))
            if recording.recorder is not None:
                await recording.recorder.turn_ended()
        raise
    except CompactionFailed:  # already reported (an error event); the turn ends quietly
        if not input_recorded:
            with anyio.CancelScope(shield=True):
                await _record_input(state, user_input)
    except Exception as exc:  # a bug or an I/O failure: report it, keep the session usable
        recording.emit(ErrorEvent(message=f"turn failed: {exc}", turn_id=turn.turn_id))
        with anyio.CancelScope(shield=True):
            if not input_recorded:
                await _record_input(state, user_input)
            if tokens_unsaved:
                await _persist_token_status(state, turn)
    await _persist_event(state, TaskComplete(turn_id=turn.turn_id, last_agent_message=last_message))
    if recording.recorder is not None:
        await recording.recorder.turn_ended()
    return last_message


def pre_turn_trigger(state: TurnState, turn: TurnContext) -> tuple[Trigger | None, str]:
    """Whether the turn starts with a compaction, and the model that summarizes (spec §8.2):
    a switch to a model with a smaller window while over its limit compacts with the previous
    model (``model_downshift``); else reaching the limit compacts (``pre_turn``)."""
    config = turn.session.config
    tokens = state.context_tokens
    current = token_status(turn.model, config)
    previous_model = state.previous_model
    if previous_model is not None and previous_model != turn.model:
        previous = token_status(previous_model, config)
        window = current.context_window
        if (
            window is not None
            and previous.context_window is not None
            and window < previous.context_window
            and (current.reached(tokens) or tokens >= window)
        ):
            return "model_downshift", previous_model
    if current.reached(tokens):
        return "pre_turn", turn.model
    return None, turn.model


async def compact(
    state: TurnState,
    turn: TurnContext,
    deps: TurnDeps,
    trigger: Trigger,
    injection: Injection | None,
    *,
    model: str | None = None,
    persist: bool = True,
) -> CompactionResult:
    """Run a compaction and install its result in ``state``; ``persist``: write the
    ``token_count`` now (a pre-turn compaction writes it once the turn's input is recorded)."""
    tokens_before = state.context_tokens
    result = await run_compaction(
        state.recording,
        deps.client,
        model=model or turn.model,
        instructions=turn.base_instructions,
        config=turn.session.config,
        retry=deps.retry,
        window=state.window,
        injection=injection,
        turn_id=turn.turn_id,
        on_request=deps.on_request,
    )
    if result.usage is not None:
        state.session_tokens.add(result.usage)
    state.window = result.window
    state.reference_context = result.reference_context
    state.context_tokens = result.context_tokens
    announce_compaction(
        state.recording,
        result,
        trigger=trigger,
        tokens_before=tokens_before,
        turn_id=turn.turn_id,
    )
    if persist:
        await _persist_token_status(state, turn)
    return result


async def _persist_token_status(state: TurnState, turn: TurnContext) -> None:
    """A ``token_count`` with the session totals and the active context tokens (no usage)."""
    status = token_status(turn.model, turn.session.config)
    info = token_count_info(
        state.session_tokens.to_json(), None, None, status, state.context_tokens
    )
    await _persist_event(state, TokenCount(info=info))


async def run_compact_task(state: TurnState, turn: TurnContext, deps: TurnDeps) -> str | None:
    """A manual compaction as a task of its own; returns the summary (None if it failed)."""
    recording = state.recording
    recording.turn_id = turn.turn_id
    await _persist_event(state, TaskStarted(turn_id=turn.turn_id))
    summary: str | None = None
    try:
        summary = (await compact(state, turn, deps, "manual", None)).summary
    except CompactionFailed:
        pass
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await _persist_event(state, TurnAborted(turn_id=turn.turn_id, reason="interrupted"))
            if recording.recorder is not None:
                await recording.recorder.turn_ended()
        raise
    await _persist_event(state, TaskComplete(turn_id=turn.turn_id, last_agent_message=None))
    if recording.recorder is not None:
        await recording.recorder.turn_ended()
    return summary


__all__ = [
    "TokenTotals",
    "TurnDeps",
    "TurnState",
    "compact",
    "pre_turn_trigger",
    "run_compact_task",
    "run_turn",
]
