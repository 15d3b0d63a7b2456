"""The state a turn works on and with: ``TurnState`` (what the session's turns advance),
``TurnDeps`` (capture settings and caches, MCP, model client, retry policy) and the two records
every phase of a turn makes (its input, its events)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING

import msgspec

from mini_codex.context.window import WindowInfo
from mini_codex.models.base import ModelClient, Prompt, TokenUsage
from mini_codex.models.retry import RetryPolicy
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
)
from mini_codex.protocol.items import Message
from mini_codex.runtime.capture import CaptureCaches, CapturedStep, CaptureSettings, capture_step
from mini_codex.runtime.contexts import TurnContext
from mini_codex.runtime.recording import Recording

if TYPE_CHECKING:  # the MCP runtime (and its SDK) is loaded only when servers are configured
    from mini_codex.mcp.runtime import McpRuntime

__all__ = ["TokenTotals", "TurnDeps", "TurnState", "persist_event", "record_input"]


class TokenTotals(msgspec.Struct):
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
        return msgspec.structs.asdict(self)


class TurnState(msgspec.Struct):
    """Session state the active turn reads and advances (one turn runs at a time)."""

    recording: Recording
    reference_context: TurnContextItem | None = None
    previous_model: str | None = None
    pending_input: list[ResponseItem] = msgspec.field(default_factory=list)
    session_tokens: TokenTotals = msgspec.field(default_factory=TokenTotals)
    context_tokens: int = 0
    """Active context tokens (spec §8.1): the last response's usage, re-estimated offline when
    the provider reports none and after every history rewrite."""
    window: WindowInfo = msgspec.field(default_factory=lambda: WindowInfo(number=0))
    checkpoint: Callable[[], Awaitable[None]] | None = None
    """Awaited between steps; writes a rollout checkpoint when one is due."""

    def take_pending(self) -> list[ResponseItem]:
        taken, self.pending_input = self.pending_input, []
        return taken


class TurnDeps(msgspec.Struct, frozen=True):
    """What ``run_turn`` works with besides the session state: the capture settings and caches,
    the MCP runtime, the model client, the retry policy. (Names: ``env`` is a child process's
    environment, ``environ`` the whole process environment, ``environments`` the execution
    environments of a turn.)"""

    capture: Callable[[], CaptureSettings]
    """The session's capture settings as they are now (a refresh may replace them mid-turn)."""
    caches: CaptureCaches
    client: ModelClient
    retry: RetryPolicy
    on_request: Callable[[Prompt], None] | None = None
    mcp: McpRuntime | None = None

    async def capture_step(
        self,
        turn: TurnContext,
        sequence: int,
        required: Collection[str],
        previous_model: str | None,
    ) -> CapturedStep:
        return await capture_step(
            turn,
            self.capture(),
            self.caches,
            sequence,
            mcp_runtime=self.mcp,
            required_mcp_servers=required,
            previous_model=previous_model,
        )


def _is_notification(item: Message) -> bool:
    """A sub-agent's ``<subagent_notification>``: model-visible, not something the user said."""
    return message_text(item).startswith("<subagent_notification>")


async def record_input(state: TurnState, items: Sequence[ResponseItem]) -> None:
    recording = state.recording
    await recording.record_items(items)
    for item in items:
        if isinstance(item, Message) and item.role == "user" and not _is_notification(item):
            event = UserMessageEvent(message=message_text(item))
            await recording.record_lines([EventMsgLine(payload=event)])
            recording.emit(event)


async def persist_event(
    state: TurnState, event: TaskStarted | TaskComplete | TurnAborted | TokenCount
) -> None:
    await state.recording.record_lines([EventMsgLine(payload=event)])
    state.recording.emit(event)
