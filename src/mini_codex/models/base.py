"""The model port: what the runtime sends (``Prompt``) and what a provider streams back.

``ModelClient`` is the one contract every provider implements (OpenAI Responses, Chat Completions,
the shipped ``mini_codex.testing.ScriptedModel``). ``stream(prompt)`` is an async generator: the
request is sent when iteration starts, events arrive in order, and the stream ends right after a
``Completed`` event. Failures are raised as ``ModelError`` subclasses (``models.errors``); a stream
that ends without ``Completed`` is the caller's retryable ``StreamError`` (``STREAM_CLOSED_EARLY``).

``ModelClientOptions`` is what a provider factory receives (the registry builds it from the CLI's
settings). What does not belong here: retries (``models.retry``), provider wiring
(``models.registry``), and any SDK import.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, TypeAlias

import msgspec

from mini_codex.config import ModelProviderConfig
from mini_codex.protocol.items import ResponseItem


def json_schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``json_schema`` output format of a request (Codex names it ``codex_output_schema``)."""
    return {"type": "json_schema", "name": "codex_output_schema", "schema": schema, "strict": True}


class Prompt(msgspec.Struct, frozen=True, kw_only=True):
    """One model request, built by the runtime for one step (spec §4.1)."""

    model: str
    instructions: str
    """Base instructions (the system prompt of the Responses API)."""
    input: Sequence[ResponseItem]
    """History for the prompt, oldest first: a tuple, or a ``context.PromptItems`` (a resumed
    history not built yet, which the providers encode from its JSON)."""
    tools: tuple[dict[str, Any], ...] = ()
    """Responses-API tool entries: exactly the step's model-visible specs."""
    parallel_tool_calls: bool = True
    """Always true in Codex: parallelism is governed client-side."""
    reasoning_effort: str | None = None
    reasoning_summary: str | None = None
    turn_id: str = ""
    step_id: str = ""
    step_sequence: int = 0
    output_schema: dict[str, Any] | None = None
    """A JSON Schema the final message must match (``--output-schema``): sent as the Responses
    ``text.format`` / the Chat ``response_format`` of type ``json_schema``."""

    def to_trace_json(self) -> dict[str, Any]:
        """The JSON object written per request by ``--trace-requests``."""
        trace: dict[str, Any] = {
            "turn_id": self.turn_id,
            "step_id": self.step_id,
            "step_sequence": self.step_sequence,
            "model": self.model,
            "instructions": self.instructions,
            "input": [item.to_json() for item in self.input],
            "tools": list(self.tools),
            "parallel_tool_calls": self.parallel_tool_calls,
        }
        reasoning = {
            key: value
            for key, value in (
                ("effort", self.reasoning_effort),
                ("summary", self.reasoning_summary),
            )
            if value is not None
        }
        if reasoning:
            trace["reasoning"] = reasoning
        if self.output_schema is not None:
            trace["output_schema"] = self.output_schema
        return trace


class TokenUsage(msgspec.Struct, frozen=True, kw_only=True):
    """Token usage of one response (Codex ``TokenUsage`` field names)."""

    input_tokens: int
    cached_input_tokens: int = 0
    output_tokens: int
    reasoning_output_tokens: int = 0
    total_tokens: int

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_output_tokens=self.reasoning_output_tokens + other.reasoning_output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_output_tokens": self.reasoning_output_tokens,
            "total_tokens": self.total_tokens,
        }

    @classmethod
    def from_provider(cls, usage: Any, *, input_name: str, output_name: str) -> TokenUsage:
        """A provider SDK's usage object read by its field names: ``{input_name}_tokens`` with
        ``{input_name}_tokens_details.cached_tokens``, ``{output_name}_tokens`` with
        ``{output_name}_tokens_details.reasoning_tokens``, and ``total_tokens`` (the sum when
        absent or 0); a missing or null count is 0. Responses: ``input``/``output``; Chat
        Completions: ``prompt``/``completion``."""
        input_tokens = _count(usage, f"{input_name}_tokens")
        output_tokens = _count(usage, f"{output_name}_tokens")
        input_details = getattr(usage, f"{input_name}_tokens_details", None)
        output_details = getattr(usage, f"{output_name}_tokens_details", None)
        return cls(
            input_tokens=input_tokens,
            cached_input_tokens=_count(input_details, "cached_tokens"),
            output_tokens=output_tokens,
            reasoning_output_tokens=_count(output_details, "reasoning_tokens"),
            total_tokens=_count(usage, "total_tokens") or input_tokens + output_tokens,
        )


def _count(source: Any, name: str) -> int:
    return int(getattr(source, name, 0) or 0)


# --- stream events (closed union) ---------------------------------------------------------------


class Created(msgspec.Struct, frozen=True):
    """The provider accepted the request (``response.created``)."""

    response_id: str | None


class OutputItemAdded(msgspec.Struct, frozen=True):
    """An output item started; content may be empty and arrive as deltas."""

    item: ResponseItem


class OutputTextDelta(msgspec.Struct, frozen=True):
    """A piece of assistant text for the item being streamed."""

    item_id: str | None
    delta: str


class ReasoningSummaryDelta(msgspec.Struct, frozen=True):
    """A piece of a reasoning summary."""

    item_id: str | None
    delta: str


class ToolCallInputDelta(msgspec.Struct, frozen=True):
    """A piece of a tool call's input (for example a streamed ``apply_patch`` body)."""

    call_id: str
    delta: str


class OutputItemDone(msgspec.Struct, frozen=True):
    """An output item is complete; this is the item recorded into history."""

    item: ResponseItem


class Completed(msgspec.Struct, frozen=True):
    """The response finished (``response.completed``); always the last event of a stream."""

    response_id: str | None
    usage: TokenUsage | None = None
    end_turn: bool | None = None
    """``False`` forces a follow-up request even without tool calls."""


ModelEvent: TypeAlias = (
    Created
    | OutputItemAdded
    | OutputTextDelta
    | ReasoningSummaryDelta
    | ToolCallInputDelta
    | OutputItemDone
    | Completed
)


class ModelClient(Protocol):
    """A model provider: one streaming request method plus ``aclose``."""

    def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        """Send ``prompt`` and yield its events; raise ``ModelError`` subclasses on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections; the client is not used afterwards."""
        ...


class ModelClientOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a provider factory receives (no provider reads the environment itself)."""

    model: str
    """The model name, or for ``scripted`` the script file path."""
    provider_name: str = "openai"
    """The ``[model_providers.NAME]`` key the settings came from (for messages)."""
    provider: ModelProviderConfig = msgspec.field(default_factory=ModelProviderConfig)
    api_key: str | None = None
    """The key read by the CLI from ``provider.env_key`` (or ``OPENAI_API_KEY``)."""
    organization: str | None = None
    """``OpenAI-Organization`` header (the CLI reads ``OPENAI_ORG_ID``)."""
    project: str | None = None
    """``OpenAI-Project`` header (the CLI reads ``OPENAI_PROJECT_ID``)."""
