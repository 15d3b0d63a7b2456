"""Local compaction: summarize the history, install the replacement (spec/codex-runtime.md §8).

What belongs here: the token status of a session (``TokenStatus``: active context tokens, the
model's window and auto-compaction limit), the triggers' questions (``pre_turn_reason``,
``mid_turn_due``) and :func:`run_compaction` itself. What does not: *when* the turn loop asks
(``turn.py``), building the replacement history (``context.compaction``, pure), counting tokens
(``models.tokens``).

:func:`run_compaction`, in order:

1. The summarization request: the history for the prompt plus the compact prompt as a ``user``
   message, no tools, the base instructions. A context-window error drops the oldest history item
   from the request (with the other half of its call/output pair) and retries at once; other
   retryable errors back off per the session's retry policy; anything else fails the compaction
   (an ``error`` event, :class:`CompactionFailed`).
2. The summarizer's output items are recorded (history and rollout: Codex 0.169 writes its answer
   just before the ``compacted`` line; the replacement supersedes it on replay).
3. Replacement = recent real user messages within 20,000 tokens (at most a quarter of the
   auto-compaction limit: ``user_message_budget``) + the summary as a user message;
   with an injection (mid-turn only) the fresh initial context goes before the last real user
   message.
4. Installed: history replaced (baseline cleared, I4), window advanced, ``compacted`` written.
   With an injection (mid-turn) the baseline becomes the injected world state, a FULL
   ``world_state`` then ``turn_context`` follow (I5) and the turn context becomes the reference:
   the turn continues and nothing is injected twice. Without (pre-turn, after a resume, model
   downshift, manual: "do not inject", codex-worldstate.md §4.4) the reference stays cleared and
   no ``world_state`` is written here: the next turn start finds no reference and re-injects the
   full initial context, writing a FULL ``world_state`` then ``turn_context`` before the new user
   message (spec/codex-runtime.md §8.4). For a pre-turn compaction that turn start follows at
   once, so the file reads as Codex 0.169 writes it (summarizer answer, ``compacted``, full
   ``world_state``, ``turn_context``, user message; codex-worldstate.md §10) and the next request
   carries [kept user messages, summary, full initial context, new user message].
5. Active context tokens re-estimated from the new history. The caller installs the result in
   the session (reference, window, tokens), then :func:`announce_compaction` emits
   ``context_compacted`` and the long-threads warning.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, NoReturn

import anyio
import msgspec

from mini_codex.config import Config
from mini_codex.context import ContextManager
from mini_codex.context.compaction import (
    SUMMARIZATION_PROMPT,
    USER_MESSAGE_BUDGET,
    build_replacement_history,
    insert_initial_context,
    real_user_messages,
    summary_text,
)
from mini_codex.context.window import WindowInfo
from mini_codex.errors import ConfigError, MiniCodexError, ModelError
from mini_codex.models.base import Completed, ModelClient, OutputItemDone, Prompt, TokenUsage
from mini_codex.models.errors import ContextWindowExceeded, StreamError
from mini_codex.models.retry import RetryPolicy
from mini_codex.models.tokens import (
    auto_compact_token_limit,
    context_window_for_model,
    count_tokens,
    estimate_context_tokens,
    token_limit_reached,
    truncate_to_tokens,
)
from mini_codex.protocol import (
    CompactedItem,
    CompactedLine,
    Message,
    ResponseItem,
    TurnContextItem,
    TurnContextLine,
    WorldStateItem,
    WorldStateLine,
    message_text,
    user_message,
)
from mini_codex.protocol.session_events import (
    ContextCompacted,
    ErrorEvent,
    WarningEvent,
)
from mini_codex.rollout.paths import new_thread_id
from mini_codex.runtime.context_updates import initial_context_order
from mini_codex.runtime.recording import Recording
from mini_codex.runtime.sampling import pause_before_retry
from mini_codex.world_state import WorldState, fragments_to_messages

__all__ = [
    "LONG_THREADS_WARNING",
    "CompactionFailed",
    "CompactionResult",
    "Injection",
    "TokenStatus",
    "Trigger",
    "announce_compaction",
    "compact_prompt",
    "context_tokens",
    "run_compaction",
    "token_status",
]

LONG_THREADS_WARNING = (
    "Heads up: long threads and repeated compactions can make the model less accurate. "
    "Start a new thread when you can, to keep threads small and focused."
)

Trigger = Literal["pre_turn", "mid_turn", "model_downshift", "manual"]


class CompactionFailed(MiniCodexError):
    """The summarization request failed; history is unchanged."""


class TokenStatus(msgspec.Struct, frozen=True):
    """Spec §8.1 for one model: its context window and auto-compaction limit (None: unknown)."""

    context_window: int | None
    limit: int | None

    def reached(self, tokens: int) -> bool:
        return token_limit_reached(tokens, self.limit)


def token_status(model: str, config: Config) -> TokenStatus:
    window = context_window_for_model(model, config.model_context_window)
    return TokenStatus(
        window, auto_compact_token_limit(window, config.model_auto_compact_token_limit)
    )


def compact_prompt(config: Config) -> str:
    """``compact_prompt``, else the text of ``experimental_compact_prompt_file``, else built-in."""
    if config.compact_prompt is not None and config.compact_prompt.strip():
        return config.compact_prompt
    path = config.experimental_compact_prompt_file
    if path is not None:
        try:
            text = path.expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"cannot read experimental_compact_prompt_file {path}: {exc}"
            ) from exc
        if text.strip():
            return text
    return SUMMARIZATION_PROMPT


def user_message_budget(status: TokenStatus) -> int:
    """Tokens of recent user messages a compaction keeps: 20,000 (Codex), but at most a quarter
    of the auto-compaction limit, so that a compaction always gets well under the limit in a
    small window (with 20,000 of user messages, a 10,000-token window would compact every turn).
    """
    if status.limit is None:
        return USER_MESSAGE_BUDGET
    return min(USER_MESSAGE_BUDGET, status.limit // 4)


class Injection(msgspec.Struct, frozen=True):
    """Re-inject the initial context built from ``world_state``; ``turn_context`` becomes the
    reference context (mid-turn compaction only: the others leave the reference cleared)."""

    world_state: WorldState
    turn_context: TurnContextItem


class CompactionResult(msgspec.Struct, frozen=True):
    window: WindowInfo
    reference_context: TurnContextItem | None
    context_tokens: int
    summary: str
    trimmed_items: int
    usage: TokenUsage | None
    """What the summarization request used (counted in the session's totals)."""


def advance_window(window: WindowInfo, now_ms: int, rand: bytes) -> WindowInfo:
    new_id = new_thread_id(now_ms, rand)
    return WindowInfo(
        number=window.number + 1,
        first_id=window.first_id or window.current_id or new_id,
        previous_id=window.current_id,
        current_id=new_id,
    )


def context_tokens(instructions: str, model: str, history: ContextManager) -> int:
    """The active context tokens after a history rewrite (estimated offline, spec §8.1)."""
    return estimate_context_tokens(instructions, (), history.for_prompt(), model)


async def run_compaction(
    recording: Recording,
    client: ModelClient,
    *,
    model: str,
    instructions: str,
    config: Config,
    retry: RetryPolicy,
    window: WindowInfo,
    injection: Injection | None = None,
    turn_id: str = "",
    on_request: Callable[[Prompt], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
) -> CompactionResult:
    """Summarize and replace the history (module docs). Raises :class:`CompactionFailed`."""
    history = recording.history
    try:
        prompt_text = compact_prompt(config)
    except ConfigError as exc:
        _failed(recording, turn_id, exc)
    work = ContextManager(history.items)
    trimmed = 0
    retries = 0
    while True:
        prompt = Prompt(
            model=model,
            instructions=instructions,
            input=(*work.for_prompt(), user_message(prompt_text)),
            turn_id=turn_id,
        )
        if on_request is not None:
            on_request(prompt)
        try:
            output, summarizer_usage = await _summarize(client, prompt)
            break
        except ContextWindowExceeded as err:
            if len(work) <= 1:
                _failed(recording, turn_id, err)
            work.remove_first_item()
            trimmed += 1
            retries = 0
        except ModelError as err:
            if not retry.should_retry(err, retries):
                _failed(recording, turn_id, err)
            retries += 1
            await pause_before_retry(
                retry, err, retries, recording.emit, sleep, random.uniform(0.9, 1.1)
            )
    if trimmed:
        recording.emit(
            WarningEvent(
                message=f"Trimmed {trimmed} older thread item(s) before compacting so the "
                "prompt fits the model context window."
            )
        )
    # Installing is all or nothing: an interrupt now must not leave history and rollout apart.
    with anyio.CancelScope(shield=True):
        user_texts = real_user_messages(history.items)
        await recording.record_items(output, quiet=True)
        summary = summary_text(_last_assistant_text(output))
        replacement = build_replacement_history(
            user_texts,
            summary,
            count=lambda text: count_tokens(text, model),
            truncate=lambda text, tokens: truncate_to_tokens(text, tokens, model),
            budget=user_message_budget(token_status(model, config)),
        )
        if injection is not None:
            initial = fragments_to_messages(
                initial_context_order(injection.world_state.render_full())
            )
            replacement = insert_initial_context(replacement, initial)
        new_window = advance_window(window, int(time.time() * 1000), os.urandom(10))
        history.replace(replacement)
        await recording.record_lines(
            [
                CompactedLine(
                    payload=CompactedItem(
                        message=summary,
                        replacement_history=replacement,
                        window_number=new_window.number,
                        first_window_id=new_window.first_id,
                        previous_window_id=new_window.previous_id,
                        window_id=new_window.current_id,
                    )
                )
            ]
        )
        reference: TurnContextItem | None = None
        if injection is not None:
            snapshot = injection.world_state.snapshot()
            history.set_world_state_baseline(snapshot)
            await recording.record_lines(
                [
                    WorldStateLine(payload=WorldStateItem(full=True, state=snapshot.to_json())),
                    TurnContextLine(payload=injection.turn_context),
                ]
            )
            reference = injection.turn_context
        tokens_after = context_tokens(instructions, model, history)
    return CompactionResult(new_window, reference, tokens_after, summary, trimmed, summarizer_usage)


def announce_compaction(
    recording: Recording,
    result: CompactionResult,
    *,
    trigger: Trigger,
    tokens_before: int,
    turn_id: str = "",
) -> None:
    """``context_compacted`` and the long-threads warning; emitted by the caller once the result
    is installed in the session, so a listener sees the state the compaction left."""
    recording.emit(
        ContextCompacted(
            turn_id=turn_id or None,
            trigger=trigger,
            window_number=result.window.number,
            tokens_before=tokens_before,
            tokens_after=result.context_tokens,
            trimmed_items=result.trimmed_items,
        )
    )
    recording.emit(WarningEvent(message=LONG_THREADS_WARNING))


def _failed(recording: Recording, turn_id: str, err: MiniCodexError) -> NoReturn:
    message = f"compaction failed: {err}"
    recording.emit(ErrorEvent(message=message, turn_id=turn_id or None))
    raise CompactionFailed(message) from err


async def _summarize(
    client: ModelClient, prompt: Prompt
) -> tuple[list[ResponseItem], TokenUsage | None]:
    items: list[ResponseItem] = []
    stream = client.stream(prompt)
    try:
        async for event in stream:
            match event:
                case OutputItemDone(item=item):
                    items.append(item)
                case Completed(usage=usage):
                    return items, usage
                case _:
                    pass
    finally:
        # Close the stream (and its HTTP response) now, not when it is garbage collected.
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    raise StreamError("stream closed before response.completed")


def _last_assistant_text(items: list[ResponseItem]) -> str | None:
    texts = [
        message_text(item)
        for item in items
        if isinstance(item, Message) and item.role == "assistant" and message_text(item)
    ]
    return texts[-1] if texts else None


def token_count_info(
    totals: Mapping[str, int],
    turn: Mapping[str, int] | None,
    last: Mapping[str, int] | None,
    status: TokenStatus,
    active: int,
) -> dict[str, Any]:
    """The ``info`` of a ``token_count`` event: Codex's keys plus ``context_tokens`` (ours: the
    active context tokens compaction is judged by, restored on resume)."""
    info: dict[str, Any] = {"total_token_usage": dict(totals)}
    if turn is not None:
        info["turn_token_usage"] = dict(turn)
    if last is not None:
        info["last_token_usage"] = dict(last)
    if status.context_window is not None:
        info["model_context_window"] = status.context_window
    if status.limit is not None:
        info["auto_compact_token_limit"] = status.limit
    info["auto_compact_due"] = status.reached(active)
    info["context_tokens"] = active
    return info
