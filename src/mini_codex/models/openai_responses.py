"""The OpenAI Responses API provider (``wire_api = "responses"``), on the official ``openai`` SDK.

Request (spec codex-runtime §4.1): ``responses.create(stream=True, model, instructions, input,
tools, tool_choice="auto", parallel_tool_calls=True, store=False)``. Reasoning is requested only
for model families known to reason (``supports_reasoning``: names starting ``gpt-5``, ``o1``,
``o3``, ``o4``, ``codex-`` or ``gpt-oss``, after any ``org/`` prefix): then ``reasoning =
{effort?, summary}`` (summary defaults to ``"auto"``; ``"none"`` omits it) and
``include = ["reasoning.encrypted_content"]`` so reasoning is carried in history under
``store=false``.

History items are sent in the API's input shape (``request_input``), as Codex does: item ids
are never sent (with ``store=false`` they reference nothing on the server), reasoning items
without ``encrypted_content`` are dropped (the server could not use them), and items of types the
API does not take back (``ghost_snapshot``, unknown future items) are left out.

The body goes out pre-serialized (``request_pieces``, ``request_body``, ``request_lines``)
through ``models.http_post``; each stream event is decoded into a msgspec struct.
The SDK's ``responses.create``, the byte-equal reference, is a test subclass's ``_send``.

Stream events map to ``ModelEvent``s: ``response.created`` → ``Created``,
``output_item.added`` → ``OutputItemAdded``, ``output_text.delta`` → ``OutputTextDelta``,
``reasoning_summary_text.delta`` → ``ReasoningSummaryDelta``, ``custom_tool_call_input.delta``
→ ``ToolCallInputDelta``, ``output_item.done`` → ``OutputItemDone``, ``response.completed`` →
``Completed`` (usage, ``end_turn``). ``response.failed`` / ``error`` raise the classified error,
``response.incomplete`` a retryable ``StreamError`` (as Codex), and a stream that ends without
``response.completed`` raises ``stream_closed_early()``. When the server reports no usage it is
estimated offline (``models.tokens``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio.to_thread
import msgspec
import orjson
import pydantic

from mini_codex.models import base
from mini_codex.models.base import ModelEvent, Prompt, json_schema_format
from mini_codex.models.errors import ProviderError, StreamError, stream_closed_early
from mini_codex.models.openai_sdk import (
    OpenAISdkClient,
    map_openai_errors,
    next_event,
    with_provider_label,
)
from mini_codex.models.request_body import (
    RESPONSES_KEY_ORDER,
    ChunkedBody,
    EncodedArray,
    InputPieces,
    ItemBytesCache,
    compact,
    dumps,
    object_pieces,
)
from mini_codex.models.request_lines import LINE_ENCODERS
from mini_codex.models.retry import classify_stream_failure
from mini_codex.models.stream_events import (
    decode_response_event,
    end_turn,
    event_type,
    item_json,
    response_failure,
    sdk_item_json,
    usage_from_response,
)
from mini_codex.models.tokens import estimate_usage
from mini_codex.protocol.items import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    InputText,
    Message,
    OutputText,
    ResponseItem,
    parse_response_item,
)

REASONING_MODEL_PREFIXES = ("gpt-5", "o1", "o3", "o4", "codex-", "gpt-oss")
"""Model-name prefixes that get ``reasoning`` parameters (after any ``org/`` prefix)."""

_PASSTHROUGH_TYPES = frozenset({"local_shell_call", "web_search_call"})
"""Item types the port does not model but the API takes back as input."""


def supports_reasoning(model: str) -> bool:
    """Whether ``model`` belongs to a family that accepts ``reasoning`` parameters."""
    name = model.rsplit("/", 1)[-1].lower()
    return name.startswith(REASONING_MODEL_PREFIXES)


# --- item shapes ------------------------------------------------------------------------------


def _content_part(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    match part.get("type"):
        case "input_text" | "output_text":
            return {"type": part["type"], "text": part.get("text", "")}
        case "input_image":
            image = {"type": "input_image", "image_url": part.get("image_url")}
            if part.get("detail") is not None:
                image["detail"] = part["detail"]
            return image
        case str() as kind:  # an unknown part: its tag first, as its model dumps it
            return {"type": kind, **part}
        case _:
            return part


def _pick(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: data[key] for key in keys if data.get(key) is not None}


def item_shape(data: dict[str, Any], *, keep_id: bool) -> dict[str, Any] | None:
    """The API shape of one item: known fields only (``id`` when ``keep_id``), None to drop it."""
    kind = data.get("type")
    ident = ("id",) if keep_id else ()
    match kind:
        case "message":
            shaped = _pick(data, "type", "role", *ident, "phase")
            shaped["content"] = [_content_part(part) for part in data.get("content") or []]
            return shaped
        case "reasoning":
            shaped = _pick(data, "type", *ident)
            shaped["summary"] = list(data.get("summary") or [])
            content = data.get("content")
            if content and not any(
                isinstance(part, dict) and part.get("type") == "reasoning_text" for part in content
            ):
                shaped["content"] = content
            if data.get("encrypted_content") is not None:
                shaped["encrypted_content"] = data["encrypted_content"]
            return shaped
        case "function_call":
            return _pick(data, "type", *ident, "name", "namespace", "arguments", "call_id")
        case "custom_tool_call":
            return _pick(data, "type", *ident, "status", "call_id", "name", "input")
        case "function_call_output" | "custom_tool_call_output":
            return _pick(data, "type", "call_id", "output")
        case str() if kind in _PASSTHROUGH_TYPES:
            # The tag first, as the item's model dumps it (a raw rollout item may order it later).
            return {"type": kind, **{k: v for k, v in data.items() if keep_id or k != "id"}}
        case _:
            return None if not keep_id else data


def _fast_request_item(item: ResponseItem) -> dict[str, Any] | None:
    """``item_shape(item.to_json(), keep_id=False)`` read from the model's attributes for the
    common items (no ``model_dump``: ~15 µs per item, which a resumed history of 100k items
    pays once); None when the item needs the general path."""
    if isinstance(item, FunctionCall):
        if item.namespace is not None:
            return {
                "type": "function_call",
                "name": item.name,
                "namespace": item.namespace,
                "arguments": item.arguments,
                "call_id": item.call_id,
            }
        return {
            "type": "function_call",
            "name": item.name,
            "arguments": item.arguments,
            "call_id": item.call_id,
        }
    if isinstance(item, FunctionCallOutput | CustomToolCallOutput):
        if type(item.output) is not str:
            return None
        return {"type": item.type, "call_id": item.call_id, "output": item.output}
    if isinstance(item, Message):
        parts: list[dict[str, Any]] = []
        for part in item.content:
            if not isinstance(part, InputText | OutputText):
                return None
            parts.append({"type": part.type, "text": part.text})
        shaped: dict[str, Any] = {"type": "message", "role": item.role}
        phase = (item.model_extra or {}).get("phase")
        if phase is not None:
            shaped["phase"] = phase
        shaped["content"] = parts
        return shaped
    return None


def request_item(item: ResponseItem) -> dict[str, Any] | None:
    """One history item as Responses-API input under ``store=false``, None when not sent."""
    fast = _fast_request_item(item)
    if fast is not None:
        return fast
    data = item.to_json()
    if data.get("type") == "reasoning" and data.get("encrypted_content") is None:
        return None
    return item_shape(data, keep_id=False)


def request_input(items: Sequence[ResponseItem]) -> list[dict[str, Any]]:
    """History as Responses-API input under ``store=false`` (see the module docstring)."""
    return [shaped for shaped in map(request_item, items) if shaped is not None]


def request_item_json(data: dict[str, Any]) -> dict[str, Any] | None:
    """``request_item`` of the item whose ``to_json()`` is ``data``, without the model."""
    if data.get("type") == "reasoning" and data.get("encrypted_content") is None:
        return None
    return item_shape(data, keep_id=False)


def encoded_request_item(item: ResponseItem) -> bytes | None:
    """``request_item`` as JSON bytes (what ``ItemBytesCache`` keeps per history item)."""
    return _encoded(request_item(item))


def encoded_request_json(data: dict[str, Any]) -> bytes | None:
    """``encoded_request_item`` of the item whose ``to_json()`` equals ``data`` (a lazy history
    item, ``context.lazy``): the same bytes, without building the model. ``item_shape`` writes
    the keys it picks in a fixed order and the tag first, as the models dump them (free-form
    values keep the rollout's order on both paths), so ``data``'s key order does not matter."""
    return _encoded(request_item_json(data))


def _encoded(shaped: dict[str, Any] | None) -> bytes | None:
    if shaped is None:
        return None
    if all(type(value) is str for value in shaped.values()):
        return compact(orjson.dumps(shaped))  # strings only: no float to mind
    return dumps(shaped)


def output_item(raw: Any) -> ResponseItem:
    """A streamed output item (as received, an SDK model or a dict) as a history item, in the
    API's shape."""
    if isinstance(raw, msgspec.Raw):
        data: Any = item_json(raw)
        if isinstance(data, dict):
            data = sdk_item_json(data)
    elif hasattr(raw, "model_dump"):
        data = raw.model_dump(mode="json", exclude_unset=True)
    else:
        data = raw
    if not isinstance(data, dict):
        raise StreamError(f"malformed output item in the response stream: {raw!r}")
    shaped = item_shape(data, keep_id=True)
    try:
        return parse_response_item(shaped if shaped is not None else data)
    except pydantic.ValidationError as exc:
        raise StreamError(f"malformed output item in the response stream: {exc}") from exc


# --- the client ---------------------------------------------------------------------------------


class OpenAIResponsesClient(OpenAISdkClient):
    """``ModelClient`` for the Responses API (one instance per session)."""

    @functools.cached_property
    def _input_cache(self) -> ItemBytesCache[ResponseItem]:
        return ItemBytesCache(encoded_request_item)

    @functools.cached_property
    def _input_pieces(self) -> InputPieces:
        return InputPieces(encoded_request_json, self._input_cache, *LINE_ENCODERS)

    def request_body(self, prompt: Prompt) -> dict[str, Any]:
        """The keyword arguments of ``responses.create`` for ``prompt`` (without ``stream``)."""
        return {**self._body_fields(prompt), "input": request_input(prompt.input)}

    def request_bytes(self, prompt: Prompt) -> bytes:
        """The JSON body the SDK would send for ``request_body`` (with ``stream``)."""
        return b"".join(self.request_pieces(prompt))

    def request_pieces(self, prompt: Prompt) -> list[bytes]:
        """``request_bytes`` in pieces, built from the cached bytes of the history items
        (``models.request_body``) and sent without joining them into one buffer."""
        fields: dict[str, Any] = self._body_fields(prompt)
        fields["stream"] = True
        fields["input"] = EncodedArray((), self._input_pieces.pieces(prompt.input))
        return object_pieces(fields, RESPONSES_KEY_ORDER)

    def _body_fields(self, prompt: Prompt) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": prompt.model,
            "instructions": prompt.instructions,
            "tools": list(prompt.tools),
            "tool_choice": "auto",
            "parallel_tool_calls": prompt.parallel_tool_calls,
            "store": False,
        }
        if supports_reasoning(prompt.model):
            reasoning: dict[str, str] = {}
            if prompt.reasoning_effort is not None:
                reasoning["effort"] = prompt.reasoning_effort
            summary = prompt.reasoning_summary or "auto"
            if summary != "none":
                reasoning["summary"] = summary
            body["reasoning"] = reasoning
            body["include"] = ["reasoning.encrypted_content"]
        if prompt.output_schema is not None:
            body["text"] = {"format": json_schema_format(prompt.output_schema)}
        return body

    async def _send(self, prompt: Prompt) -> Any:
        """POST the request; the stream of its events (each an object with ``close()``)."""
        return await self._post.stream(
            "/responses", ChunkedBody(self.request_pieces(prompt)), decode_response_event
        )

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        with map_openai_errors(self.access):
            sdk_stream = await self._send(prompt)
        outputs: list[ResponseItem] = []
        completed: base.Completed | None = None
        custom_calls: dict[str, str] = {}  # item id -> call id
        try:
            iterator = aiter(sdk_stream)
            while completed is None:
                event = await next_event(iterator, self.idle_timeout_s, self.access)
                if event is None:
                    raise stream_closed_early()
                try:
                    mapped, completed = _map_event(event, outputs, custom_calls)
                except ProviderError as err:
                    raise with_provider_label(err, self.access) from err
                if mapped is not None:
                    yield mapped
        finally:
            with anyio.CancelScope(shield=True):
                await sdk_stream.close()
        assert completed is not None
        if completed.usage is None:
            usage = await anyio.to_thread.run_sync(
                estimate_usage, prompt, tuple(outputs), self.token_cache
            )
            completed = base.Completed(completed.response_id, usage, completed.end_turn)
        yield completed


def _map_event(
    event: Any, outputs: list[ResponseItem], custom_calls: dict[str, str]
) -> tuple[ModelEvent | None, base.Completed | None]:
    """One event (its struct, or the SDK's model) → (event to yield, ``Completed`` when the
    response finished)."""
    match event_type(event):
        case "response.created":
            return base.Created(getattr(event.response, "id", None)), None
        case "response.output_item.added":
            item = output_item(event.item)
            if isinstance(item, CustomToolCall) and item.id:
                custom_calls[item.id] = item.call_id
            return base.OutputItemAdded(item), None
        case "response.output_text.delta":
            return base.OutputTextDelta(event.item_id, event.delta), None
        case "response.reasoning_summary_text.delta":
            return base.ReasoningSummaryDelta(event.item_id, event.delta), None
        case "response.custom_tool_call_input.delta":
            call_id = custom_calls.get(event.item_id, event.item_id)
            return base.ToolCallInputDelta(call_id, event.delta), None
        case "response.output_item.done":
            item = output_item(event.item)
            outputs.append(item)
            return base.OutputItemDone(item), None
        case "response.completed":
            response = event.response
            completed = base.Completed(
                getattr(response, "id", None), usage_from_response(response), end_turn(response)
            )
            return None, completed
        case "response.failed":
            raise response_failure(event.response)
        case "response.incomplete":
            details = getattr(event.response, "incomplete_details", None)
            reason = getattr(details, "reason", None) or "unknown"
            raise StreamError(f"incomplete response returned, reason: {reason}")
        case "error":
            raise classify_stream_failure(
                getattr(event, "code", None), getattr(event, "message", None)
            )
        case _:
            return None, None


__all__ = [
    "REASONING_MODEL_PREFIXES",
    "OpenAIResponsesClient",
    "encoded_request_item",
    "encoded_request_json",
    "item_shape",
    "output_item",
    "request_input",
    "request_item",
    "request_item_json",
    "supports_reasoning",
    "usage_from_response",
]
