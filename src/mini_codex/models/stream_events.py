"""Stream events decoded into msgspec structs (issues 13 and 23).

Each SSE ``data:`` payload is decoded in one call (``decode_response_event``,
``decode_chat_chunk``) into the struct of its event, tagged by ``type`` for the Responses API
(``ResponseEvent``), or into one ``ChatChunk`` for Chat Completions. The structs name their
fields as the SDK's models do, so the providers read them, and the SDK's own models (the
reference path of a test), by the same attributes. Unknown fields are ignored; the few fields
the providers read are lenient (``Any``) where the SDK's models were, so a value of an odd type
reaches the provider as before.

Output items are kept as received (``msgspec.Raw``): ``item_json`` decodes them with the same
decoder as before (orjson, key order kept) and ``sdk_item_json`` gives the JSON the SDK's model
would dump. ``end_turn`` (not in the SDK's ``Response``) is a field of ``ResponseInfo``.

Anything that does not decode into a struct goes the old way (``sse.decode_json``): an event of
an unknown ``type``, or without one, or not an object, is returned as decoded (the provider
ignores it), an event carrying ``{"error": ...}`` raises its error, and a known event whose
fields do not fit raises a one-line ``StreamError``.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from mini_codex.models.base import TokenUsage
from mini_codex.models.errors import ProviderError, StreamError
from mini_codex.models.retry import classify_stream_failure
from mini_codex.models.sse import decode_json, event_failure

__all__ = [
    "ChatChunk",
    "ResponseEvent",
    "ResponseInfo",
    "decode_chat_chunk",
    "decode_response_event",
    "end_turn",
    "event_type",
    "item_json",
    "response_failure",
    "sdk_item_json",
    "usage_from_response",
]


class _Struct(msgspec.Struct, forbid_unknown_fields=False):
    pass


class TokenDetails(_Struct):
    cached_tokens: Any = None
    reasoning_tokens: Any = None


class Usage(_Struct):
    """Usage of both APIs (``input``/``output`` and ``prompt``/``completion`` names)."""

    input_tokens: Any = None
    output_tokens: Any = None
    input_tokens_details: TokenDetails | None = None
    output_tokens_details: TokenDetails | None = None
    prompt_tokens: Any = None
    completion_tokens: Any = None
    prompt_tokens_details: TokenDetails | None = None
    completion_tokens_details: TokenDetails | None = None
    total_tokens: Any = None


class ErrorInfo(_Struct):
    code: Any = None
    message: Any = None


class IncompleteDetails(_Struct):
    reason: Any = None


class ResponseInfo(_Struct):
    id: Any = None
    usage: Usage | None = None
    error: ErrorInfo | None = None
    incomplete_details: IncompleteDetails | None = None
    end_turn: Any = None


class _Event(_Struct, tag_field="type", kw_only=True):
    error: Any = None  # ``{"error": ...}`` on any event raises (``sse.event_failure``)


class ResponseCreated(_Event, tag="response.created"):
    response: ResponseInfo


class OutputItemAdded(_Event, tag="response.output_item.added"):
    item: msgspec.Raw


class OutputItemDone(_Event, tag="response.output_item.done"):
    item: msgspec.Raw


class OutputTextDelta(_Event, tag="response.output_text.delta"):
    item_id: Any
    delta: Any


class ReasoningSummaryTextDelta(_Event, tag="response.reasoning_summary_text.delta"):
    item_id: Any
    delta: Any


class CustomToolCallInputDelta(_Event, tag="response.custom_tool_call_input.delta"):
    item_id: Any
    delta: Any


class ResponseCompleted(_Event, tag="response.completed"):
    response: ResponseInfo


class ResponseFailed(_Event, tag="response.failed"):
    response: ResponseInfo


class ResponseIncomplete(_Event, tag="response.incomplete"):
    response: ResponseInfo


class ErrorEvent(_Event, tag="error"):
    code: Any = None
    message: Any = None


ResponseEvent = (
    ResponseCreated
    | OutputItemAdded
    | OutputItemDone
    | OutputTextDelta
    | ReasoningSummaryTextDelta
    | CustomToolCallInputDelta
    | ResponseCompleted
    | ResponseFailed
    | ResponseIncomplete
    | ErrorEvent
)
_RESPONSE_TYPES: frozenset[str] = frozenset(
    str(cls.__struct_config__.tag) for cls in ResponseEvent.__args__
)


class FunctionDelta(_Struct):
    name: Any = None
    arguments: Any = None


class ToolCallDelta(_Struct):
    index: Any = 0
    id: Any = None
    function: FunctionDelta | None = None


class ChoiceDelta(_Struct):
    content: Any = None
    reasoning_content: Any = None
    reasoning: Any = None
    tool_calls: list[ToolCallDelta] | None = None


class Choice(_Struct):
    index: Any = 0
    delta: ChoiceDelta | None = None
    finish_reason: Any = None


class ChatChunk(_Struct):
    id: Any = None
    choices: list[Choice] | None = None
    usage: Usage | None = None
    error: Any = None


_RESPONSE_DECODER: msgspec.json.Decoder[Any] = msgspec.json.Decoder(ResponseEvent)
_CHAT_DECODER = msgspec.json.Decoder(ChatChunk)


def _raise_failure(error: Any) -> None:
    failure = event_failure({"error": error})
    if failure is not None:
        raise failure


def decode_response_event(data: bytes) -> Any:
    """One Responses stream event: its struct, or (see the module docstring) the decoded JSON."""
    try:
        event = _RESPONSE_DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _fallback(data, None)
    if event.error:
        _raise_failure(event.error)
    return event


def decode_chat_chunk(data: bytes) -> Any:
    """One Chat Completions chunk: its ``ChatChunk``, or the decoded JSON when not an object."""
    try:
        chunk = _CHAT_DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _fallback(data, ChatChunk)
    if chunk.error:
        _raise_failure(chunk.error)
    return chunk


def _fallback(data: bytes, chunk_type: type[ChatChunk] | None) -> Any:
    value = decode_json(data)  # StreamError when not JSON
    failure = event_failure(value)
    if failure is not None:
        raise failure
    if not isinstance(value, dict):
        return value
    if chunk_type is None and value.get("type") not in _RESPONSE_TYPES:
        return value  # an unknown event: ignored, as before
    if chunk_type is None and isinstance(value.get("item"), dict):  # kept as received
        value = {**value, "item": msgspec.Raw(json.dumps(value["item"]).encode())}
    try:  # JSON that only the standard parser reads (NaN), or fields that do not fit
        return msgspec.convert(value, chunk_type or ResponseEvent)
    except msgspec.ValidationError as exc:
        kind = "chunk" if chunk_type is not None else f"{value.get('type')} event"
        raise StreamError(f"malformed {kind} in the response stream: {exc}") from None


def event_type(event: Any) -> Any:
    """The ``type`` of a decoded event (its struct's tag) or of an SDK model."""
    if isinstance(event, _Event):
        return event.__struct_config__.tag
    return getattr(event, "type", None)


def usage_from_response(response: Any) -> TokenUsage | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    return TokenUsage.from_provider(usage, input_name="input", output_name="output")


def end_turn(response: Any) -> bool | None:
    if isinstance(response, ResponseInfo):
        value = response.end_turn
    else:  # the SDK's model: ``end_turn`` is an extra field
        value = (getattr(response, "model_extra", None) or {}).get("end_turn")
    return value if isinstance(value, bool) else None


def response_failure(response: Any) -> ProviderError:
    error = getattr(response, "error", None)
    code = getattr(error, "code", None)
    message = getattr(error, "message", None)
    return classify_stream_failure(code, message or "response.failed without an error message")


def item_json(raw: msgspec.Raw) -> Any:
    """An output item as received (decoded as every event was before: orjson, key order kept)."""
    return decode_json(bytes(raw))


_FLAT_ITEMS = frozenset({"function_call", "custom_tool_call"})
_TEXT_PART_KEYS = frozenset({"type", "text"})


def _text_parts(parts: Any, kinds: frozenset[str]) -> bool:
    return isinstance(parts, list) and all(
        isinstance(part, dict) and part.keys() == _TEXT_PART_KEYS and part["type"] in kinds
        for part in parts
    )


def _output_text_parts(parts: Any) -> bool:
    """Message parts that ``item_shape`` rebuilds as ``{type, text}`` whatever else they carry
    (``annotations``, ``logprobs``): what the SDK's model adds or reorders there is dropped."""
    return isinstance(parts, list) and all(
        isinstance(part, dict)
        and part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
        for part in parts
    )


def sdk_item_json(data: dict[str, Any]) -> dict[str, Any]:
    """An output item's JSON as the SDK's model would dump it (``model_dump(mode="json",
    exclude_unset=True)``), so history items (and so the next request's bytes and the rollout)
    are the same on both paths.

    The common items are answered directly: calls are flat, and the parts of messages and
    reasoning items are plain ``{type, text}`` parts, which the SDK's part models dump as
    ``{text, type}`` (fields in declaration order). Anything else goes through the SDK's model
    (built on first use).
    """
    kind = data.get("type")
    if kind in _FLAT_ITEMS:
        return data
    if kind == "message" and _output_text_parts(data.get("content")):
        return data  # output_text parts are rebuilt by ``item_shape`` anyway
    if (
        kind == "reasoning"
        and _text_parts(data.get("summary") or [], frozenset({"summary_text"}))
        and _text_parts(data.get("content") or [], frozenset({"reasoning_text"}))
    ):
        ordered = dict(data)
        for key in ("summary", "content"):
            if data.get(key):
                ordered[key] = [{"text": p.get("text"), "type": p["type"]} for p in data[key]]
        return ordered
    from openai._models import construct_type
    from openai.types.responses import ResponseOutputItem

    model = construct_type(type_=ResponseOutputItem, value=data)
    dumped = (
        model.model_dump(mode="json", exclude_unset=True) if hasattr(model, "model_dump") else model
    )
    return dumped if isinstance(dumped, dict) else data
