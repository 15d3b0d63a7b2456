"""``run_turn``: the step loop of one user turn (spec/codex-runtime.md §3), phase by phase.

- ``_start``: capture the first step (the input is recorded even when cancelled there, I9), a
  pre-turn compaction if due, the turn-start context updates, the user input.
- ``_next_step``: drain pending input (not on the first iteration of a turn that has input),
  reuse the first step unless pending input arrived, else capture a new one; record the step's
  world-state diff before the request (I7).
- ``_account``: the response's token usage (or an offline estimate) and its ``token_count``.
- the loop follows up while there are tool calls, ``end_turn == false`` or pending input, and
  compacts mid-turn when the window is full.
- ``_aborted`` / ``_failed``: cancellation records aborted tool outputs, the input and a
  ``<turn_aborted>`` marker, then the ``turn_aborted`` event; other errors become events and the
  session stays usable.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import msgspec

from mini_codex.errors import ModelError
from mini_codex.mcp.mentions import mentioned_servers
from mini_codex.models.tokens import estimate_context_tokens
from mini_codex.protocol import (
    ResponseItem,
    TaskComplete,
    TaskStarted,
    TokenCount,
    TurnAborted,
    message_text,
    user_message,
)
from mini_codex.protocol.items import Message
from mini_codex.protocol.session_events import ErrorEvent, StepStarted, WarningEvent
from mini_codex.runtime.compaction import (
    CompactionFailed,
    Injection,
    context_tokens,
    token_count_info,
    token_status,
)
from mini_codex.runtime.context_updates import (
    record_context_updates,
    record_step_world_state_if_changed,
)
from mini_codex.runtime.contexts import StepContext, TurnContext
from mini_codex.runtime.sampling import SamplingOutcome, run_sampling_request
from mini_codex.runtime.turn_compaction import (
    compact,
    persist_token_status,
    pre_turn_trigger,
    run_compact_task,
)
from mini_codex.runtime.turn_state import (
    TokenTotals,
    TurnDeps,
    TurnState,
    persist_event,
    record_input,
)
from mini_codex.skills.mentions import build_skill_injections, select_skills
from mini_codex.skills.model import SkillSelection
from mini_codex.skills.service import StepSkills
from mini_codex.world_state import WorldState

TURN_ABORTED_MARKER = (
    "<turn_aborted>\nThe user interrupted the previous turn; its unfinished work was abandoned."
    "\n</turn_aborted>"
)


def _mentioned_mcp_servers(items: Sequence[ResponseItem]) -> frozenset[str]:
    """Servers named as ``mcp://NAME`` in user input: the step waits for them (spec §6.4)."""
    return mentioned_servers(
        message_text(item) for item in items if isinstance(item, Message) and item.role == "user"
    )


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


class _Turn(msgspec.Struct):
    """One running turn: what its phases share."""

    state: TurnState
    turn: TurnContext
    deps: TurnDeps
    user_input: Sequence[ResponseItem]
    required_mcp: frozenset[str] = frozenset()
    input_recorded: bool = False
    tokens_unsaved: bool = False
    """A pre-turn compaction's ``token_count`` waits for the turn's input."""
    tokens: TokenTotals = msgspec.field(default_factory=TokenTotals)
    live: WorldState | None = None
    """The world state of the last request (the baseline of the next step's diff)."""
    sequence: int = 1
    selections: Sequence[SkillSelection] = ()
    """Structured skill inputs of the turn (their ``SKILL.md`` is injected after the input)."""
    skills: StepSkills | None = None
    """The first step's skills: ``$name`` mentions in the input (and in steered input) use it."""

    async def start(self) -> StepContext:
        state, turn, recording = self.state, self.turn, self.state.recording
        self.required_mcp = _mentioned_mcp_servers(self.user_input)
        first_step, self.live = await self.deps.capture_step(
            turn, 1, self.required_mcp, state.previous_model
        )
        trigger, summarizer = pre_turn_trigger(state, turn)
        if trigger is not None:
            # Before the turn's context updates and input are recorded (spec §8.2), and without
            # injecting: the reference is cleared, so the context update below re-injects the
            # full initial context (a FULL world_state, then turn_context) right before the new
            # input (spec §8.4; the line order Codex 0.169 writes, codex-worldstate.md §10).
            await compact(state, turn, self.deps, trigger, None, model=summarizer, persist=False)
            self.tokens_unsaved = True
        update = await record_context_updates(
            recording, self.live, turn.to_turn_context_item(), state.reference_context
        )
        state.reference_context = update.reference_context
        await record_input(state, self.user_input)
        self.input_recorded = True
        self.skills = first_step.skills
        await _inject_skills(state, self.skills, self.user_input, self.selections)
        if trigger is not None:
            # The active context now holds the re-injected context and the input too.
            state.context_tokens = context_tokens(
                turn.base_instructions, turn.model, recording.history
            )
            await persist_token_status(state, turn)
            self.tokens_unsaved = False
        state.previous_model = turn.model
        return first_step

    async def next_step(self, reuse: StepContext | None, can_drain: bool) -> StepContext:
        state, turn = self.state, self.turn
        pending = state.take_pending() if can_drain else []
        if pending:
            await record_input(state, pending)
            await _inject_skills(state, self.skills, pending)
            self.required_mcp |= _mentioned_mcp_servers(pending)
        if state.checkpoint is not None:
            await state.checkpoint()
        assert self.live is not None
        if reuse is not None and not pending:
            step, world_state = reuse, self.live
        else:
            self.sequence += 1
            step, world_state = await self.deps.capture_step(
                turn, self.sequence, self.required_mcp, state.previous_model
            )
        changed = await record_step_world_state_if_changed(state.recording, self.live, world_state)
        self.live = world_state
        state.recording.emit(
            StepStarted(
                turn_id=turn.turn_id,
                step_id=step.step_id,
                sequence=step.sequence,
                world_state_changed=changed,
            )
        )
        return step

    async def account(self, step: StepContext, outcome: SamplingOutcome) -> None:
        """The response's token usage (or an estimate, where a limit can be reached)."""
        state, turn = self.state, self.turn
        status = token_status(turn.model, turn.session.config)
        if outcome.usage is None:
            if status.limit is not None:
                state.context_tokens = estimate_context_tokens(
                    turn.base_instructions,
                    step.router.model_visible_specs(),
                    state.recording.history.for_prompt(),
                    turn.model,
                )
            return
        self.tokens.add(outcome.usage)
        state.session_tokens.add(outcome.usage)
        state.context_tokens = outcome.usage.total_tokens
        info = token_count_info(
            state.session_tokens.to_json(),
            self.tokens.to_json(),
            outcome.usage.to_json(),
            status,
            state.context_tokens,
        )
        await persist_event(state, TokenCount(info=info))

    async def loop(self, first_step: StepContext) -> str | None:
        state, turn, deps = self.state, self.turn, self.deps
        reuse: StepContext | None = first_step
        can_drain = not self.user_input
        while True:
            step = await self.next_step(reuse, can_drain)
            reuse = None
            try:
                outcome = await run_sampling_request(
                    step,
                    deps.client,
                    state.recording,
                    policy=deps.retry,
                    on_request=deps.on_request,
                )
            except ModelError as err:
                state.recording.emit(ErrorEvent(message=str(err), turn_id=turn.turn_id))
                return None
            await self.account(step, outcome)
            needs_follow_up = outcome.needs_follow_up or bool(state.pending_input)
            status = token_status(turn.model, turn.session.config)
            if needs_follow_up and status.reached(state.context_tokens):
                # Mid-turn compaction (spec §8.2): the turn continues in the new window.
                assert self.live is not None
                injection = Injection(self.live, turn.to_turn_context_item())
                await compact(state, turn, deps, "mid_turn", injection)
                can_drain = not outcome.needs_follow_up
                continue
            can_drain = True
            if not needs_follow_up:
                return outcome.last_agent_message

    async def record_unrecorded(self) -> None:
        """What a turn that ended early still owes the rollout: its input, its tokens."""
        if not self.input_recorded:
            await record_input(self.state, self.user_input)
        if self.tokens_unsaved:  # a resume must not see the pre-compaction context size
            await persist_token_status(self.state, self.turn)

    async def aborted(self) -> None:
        recording = self.state.recording
        await self.record_unrecorded()
        await recording.record_items([user_message(TURN_ABORTED_MARKER)])
        await persist_event(
            self.state, TurnAborted(turn_id=self.turn.turn_id, reason="interrupted")
        )
        if recording.recorder is not None:
            await recording.recorder.turn_ended()


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
    await persist_event(state, TaskStarted(turn_id=turn.turn_id))
    running = _Turn(state, turn, deps, user_input, selections=skills)
    last_message: str | None = None
    try:
        last_message = await running.loop(await running.start())
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await running.aborted()
        raise
    except CompactionFailed:  # already reported (an error event); the turn ends quietly
        if not running.input_recorded:
            with anyio.CancelScope(shield=True):
                await record_input(state, user_input)
    except Exception as exc:  # a bug or an I/O failure: report it, keep the session usable
        recording.emit(ErrorEvent(message=f"turn failed: {exc}", turn_id=turn.turn_id))
        with anyio.CancelScope(shield=True):
            await running.record_unrecorded()
    await persist_event(state, TaskComplete(turn_id=turn.turn_id, last_agent_message=last_message))
    if recording.recorder is not None:
        await recording.recorder.turn_ended()
    return last_message


__all__ = [
    "TURN_ABORTED_MARKER",
    "TokenTotals",
    "TurnDeps",
    "TurnState",
    "compact",
    "pre_turn_trigger",
    "run_compact_task",
    "run_turn",
]
