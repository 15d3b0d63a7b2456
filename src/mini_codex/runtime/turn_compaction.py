"""A turn's compactions (spec §8.2): whether a turn starts with one, running one and installing
its result in the turn state, and the manual compaction task (``Session.compact``)."""

from __future__ import annotations

import anyio

from mini_codex.protocol import TaskComplete, TaskStarted, TokenCount, TurnAborted
from mini_codex.runtime.compaction import (
    CompactionFailed,
    CompactionResult,
    Injection,
    Trigger,
    announce_compaction,
    run_compaction,
    token_count_info,
    token_status,
)
from mini_codex.runtime.contexts import TurnContext
from mini_codex.runtime.turn_state import TurnDeps, TurnState, persist_event

__all__ = ["compact", "persist_token_status", "pre_turn_trigger", "run_compact_task"]


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
        await persist_token_status(state, turn)
    return result


async def persist_token_status(state: TurnState, turn: TurnContext) -> None:
    """A ``token_count`` with the session totals and the active context tokens (no usage)."""
    status = token_status(turn.model, turn.session.config)
    info = token_count_info(
        state.session_tokens.to_json(), None, None, status, state.context_tokens
    )
    await persist_event(state, TokenCount(info=info))


async def run_compact_task(state: TurnState, turn: TurnContext, deps: TurnDeps) -> str | None:
    """A manual compaction as a task of its own; returns the summary (None if it failed)."""
    recording = state.recording
    recording.turn_id = turn.turn_id
    await persist_event(state, TaskStarted(turn_id=turn.turn_id))
    summary: str | None = None
    try:
        summary = (await compact(state, turn, deps, "manual", None)).summary
    except CompactionFailed:
        pass
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await persist_event(state, TurnAborted(turn_id=turn.turn_id, reason="interrupted"))
            if recording.recorder is not None:
                await recording.recorder.turn_ended()
        raise
    await persist_event(state, TaskComplete(turn_id=turn.turn_id, last_agent_message=None))
    if recording.recorder is not None:
        await recording.recorder.turn_ended()
    return summary
