"""The Chat Completions provider (``wire_api = "chat"``) for OpenAI-compatible servers.

For proxies and local servers (Ollama, vLLM, llama.cpp, LM Studio) that speak
``POST /chat/completions`` only. The history stays Responses-shaped; this module maps it both ways.

History → ``messages`` (``chat_messages``):

* ``instructions`` and the developer/system messages *before* the first other item form one
  leading ``system`` message (strict chat templates accept a system message only first); later
  developer messages become ``system`` messages in place.
* user → ``user`` (a string, or ``text``/``image_url`` parts when there are images); assistant
  text → ``assistant``; a ``function_call`` → a ``tool_calls`` entry of an ``assistant`` message
  (consecutive calls, and the assistant text right before them, share one message);
  ``function_call_output`` → a ``tool`` message.
* A ``custom_tool_call`` (freeform tool, e.g. ``apply_patch``) becomes a function call whose
  arguments are ``{"input": "<the raw input>"}``; its output a ``tool`` message.
* Reasoning items and unknown items are dropped (chat servers cannot take them back), and so is
  a tool output whose call was dropped.

Tools → ``tools`` (``chat_tools``): function tools as function specs; custom (freeform) tools as
functions taking one string argument ``input`` (the format, if any, is described in the
description); other tool types are left out. Calls of such a function come back as
``CustomToolCall`` items, so the runtime and the rollout never see the difference. A namespace
entry (MCP) becomes its member functions with flat names ``<namespace>__<name>``.

Stream: text deltas → ``OutputItemAdded`` (once) + ``OutputTextDelta``; ``reasoning_content`` /
``reasoning`` deltas (vLLM, Ollama, llama.cpp) → ``ReasoningSummaryDelta`` (display only);
tool-call fragments are accumulated by ``index``. At the end: ``OutputItemDone`` for the assistant
message and for each call, then ``Completed`` (usage from ``stream_options.include_usage``, else
an offline estimate). A stream that ends without any ``finish_reason`` was cut:
``stream_closed_early()``. A server that rejects tool definitions raises ``ToolsNotSupported``
(not retryable), naming the provider.

Envelope hook (``tool_calling = "envelope"``, for models without native tool calling): no
``tools`` are sent; the history, the system prompt and a ``response_format`` come from
``models.tool_envelope``, and the reply is parsed back into a message or a tool call there.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Self

import anyio.to_thread
import httpx2

from mini_codex import protocol
from mini_codex.models import base
from mini_codex.models.base import (
    ModelClientOptions,
    ModelEvent,
    Prompt,
    TokenUsage,
    json_schema_format,
)
from mini_codex.models.chat_body import chat_request_bytes, post_chat_stream
from mini_codex.models.errors import InvalidRequest, ProviderError, stream_closed_early
from mini_codex.models.openai_sdk import (
    OpenAISdkClient,
    map_openai_errors,
    next_event,
)
from mini_codex.models.tokens import estimate_usage
from mini_codex.models.tool_envelope import (
    MessageStreamer,
    envelope_history,
    envelope_instructions,
    envelope_response_format,
    parse_envelope,
)
from mini_codex.protocol.items import ResponseItem, assistant_message, message_text

CUSTOM_TOOL_ARGUMENT = "input"
"""The one string argument a freeform tool takes when exposed as a chat function."""


class ToolsNotSupported(InvalidRequest):
    """The server (or model) does not accept tool definitions; mini-codex cannot work without."""


# --- history → messages -------------------------------------------------------------------------


def _user_content(item: protocol.Message) -> str | list[dict[str, Any]]:
    if not any(isinstance(part, protocol.InputImage) for part in item.content):
        return "\n".join(
            part.text
            for part in item.content
            if isinstance(part, protocol.InputText | protocol.OutputText)
        )
    parts: list[dict[str, Any]] = []
    for part in item.content:
        if isinstance(part, protocol.InputText | protocol.OutputText):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, protocol.InputImage) and part.image_url:
            parts.append({"type": "image_url", "image_url": {"url": part.image_url}})
    return parts


def _output_text(output: str | list[dict[str, Any]]) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))


def _output_images(output: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(output, str):
        return []
    return [
        {"type": "image_url", "image_url": {"url": part["image_url"]}}
        for part in output
        if isinstance(part, dict) and part.get("type") == "input_image" and part.get("image_url")
    ]


def _tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass
class _MessageBuilder:
    messages: list[dict[str, Any]] = field(default_factory=list)
    system: list[str] = field(default_factory=list)
    leading: bool = True
    assistant: dict[str, Any] | None = None
    calls: set[str] = field(default_factory=set)
    images: list[dict[str, Any]] = field(default_factory=list)
    """Images of tool outputs (``view_image``): a tool message takes only text, so they follow
    the run of tool messages as one user message."""

    def flush_images(self) -> None:
        if self.images:
            self.messages.append({"role": "user", "content": self.images})
            self.images = []

    def flush(self) -> None:
        if self.leading:
            self.leading = False
            if self.system:
                self.messages.append({"role": "system", "content": "\n\n".join(self.system)})
        if self.assistant is not None:
            self.messages.append(self.assistant)
            self.assistant = None

    def add_call(self, call_id: str, name: str, arguments: str) -> None:
        if self.assistant is None:
            self.flush()
            self.assistant = {"role": "assistant"}
        self.assistant.setdefault("tool_calls", []).append(_tool_call(call_id, name, arguments))
        self.calls.add(call_id)

    def add(self, item: ResponseItem) -> None:
        if not isinstance(item, protocol.FunctionCallOutput | protocol.CustomToolCallOutput):
            self.flush_images()
        match item:
            case protocol.Message(role="developer" | "system"):
                if self.leading:
                    self.system.append(message_text(item))
                else:
                    self.flush()
                    self.messages.append({"role": "system", "content": message_text(item)})
            case protocol.Message(role="assistant"):
                self.flush()
                self.assistant = {"role": "assistant", "content": message_text(item)}
            case protocol.Message():
                self.flush()
                self.messages.append({"role": item.role, "content": _user_content(item)})
            case protocol.FunctionCall(call_id=call_id, arguments=arguments):
                self.add_call(call_id, item.qualified_name, arguments)
            case protocol.CustomToolCall(call_id=call_id, name=name, input=text):
                self.add_call(call_id, name, json.dumps({CUSTOM_TOOL_ARGUMENT: text}))
            case (
                protocol.FunctionCallOutput(call_id=call_id, output=output)
                | protocol.CustomToolCallOutput(call_id=call_id, output=output)
            ):
                self.flush()
                if call_id in self.calls:
                    self.messages.append(
                        {"role": "tool", "tool_call_id": call_id, "content": _output_text(output)}
                    )
                    self.images += _output_images(output)
            case _:
                pass  # reasoning and unknown items: nothing a chat server can take back


def chat_messages(instructions: str, items: Sequence[ResponseItem]) -> list[dict[str, Any]]:
    """Responses-shaped history as Chat Completions ``messages`` (module docstring)."""
    builder = _MessageBuilder(system=[instructions] if instructions else [])
    for item in items:
        builder.add(item)
    builder.flush()
    builder.flush_images()
    return builder.messages


# --- tools --------------------------------------------------------------------------------------


def _custom_description(tool: dict[str, Any]) -> str:
    text = str(tool.get("description", ""))
    text += (
        f"\n\nCall this tool with a JSON object whose only field `{CUSTOM_TOOL_ARGUMENT}` is "
        "a string holding the raw tool input."
    )
    fmt = tool.get("format")
    if isinstance(fmt, dict) and fmt.get("definition"):
        syntax = fmt.get("syntax", "grammar")
        text += f"\nThe input must follow this {syntax} grammar:\n{fmt['definition']}"
    return text


def _flattened(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Namespace entries as their member tools named ``<namespace>__<name>`` (Chat has no
    namespaces; such a call comes back with the flat name, which the router knows)."""
    flat: list[dict[str, Any]] = []
    for tool in tools:
        if tool.get("type") != "namespace":
            flat.append(tool)
            continue
        for member in tool.get("tools") or ():
            flat.append({**member, "name": f"{tool['name']}__{member['name']}"})
    return flat


def chat_tools(tools: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """Responses-API tool entries as chat function specs, and the names of the custom tools."""
    specs: list[dict[str, Any]] = []
    custom: set[str] = set()
    for tool in _flattened(tools):
        match tool.get("type"):
            case "function":
                function: dict[str, Any] = {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
                }
                if tool.get("strict"):
                    function["strict"] = True
                specs.append({"type": "function", "function": function})
            case "custom":
                custom.add(tool["name"])
                parameters = {
                    "type": "object",
                    "properties": {CUSTOM_TOOL_ARGUMENT: {"type": "string"}},
                    "required": [CUSTOM_TOOL_ARGUMENT],
                    "additionalProperties": False,
                }
                specs.append(
                    {
                        "type": "function",
                        "function": {
                            "name": tool["name"],
                            "description": _custom_description(tool),
                            "parameters": parameters,
                        },
                    }
                )
            case _:
                pass
    return specs, frozenset(custom)


_TOOL_WORDS = ("tool", "function call", "function_call")
_REJECTION_WORDS = (
    "not support",
    "unsupported",
    "not enabled",
    "requires",
    "enable-auto-tool-choice",
    "--jinja",
    "not available",
)


def tools_rejected(error: ProviderError) -> bool:
    """Whether a failed request was refused because the server cannot do tool calling."""
    if error.status is None or error.status == 429 or not 400 <= error.status < 600:
        return False
    text = str(error).lower()
    return any(word in text for word in _TOOL_WORDS) and any(
        word in text for word in _REJECTION_WORDS
    )


# --- stream accumulation ------------------------------------------------------------------------


@dataclass
class _CallAcc:
    call_id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _custom_input(arguments: str) -> str:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(parsed, dict) and isinstance(parsed.get(CUSTOM_TOOL_ARGUMENT), str):
        return str(parsed[CUSTOM_TOOL_ARGUMENT])
    return arguments


def _usage(raw: Any) -> TokenUsage | None:
    if raw is None:
        return None
    return TokenUsage.from_provider(raw, input_name="prompt", output_name="completion")


def _reasoning_delta(delta: Any) -> str | None:
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)
        if value is None:
            value = (getattr(delta, "model_extra", None) or {}).get(name)
        if isinstance(value, str) and value:
            return value
    return None


@dataclass
class _Accumulator:
    custom_tools: frozenset[str]
    response_id: str | None = None
    text: list[str] = field(default_factory=list)
    calls: dict[int, _CallAcc] = field(default_factory=dict)
    finished: bool = False
    usage: TokenUsage | None = None
    envelope: MessageStreamer | None = None
    """Set when replies are tool envelopes: only their ``message`` text streams as text."""

    def feed(self, chunk: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if self.response_id is None:
            self.response_id = getattr(chunk, "id", None) or ""
            events.append(base.Created(self.response_id or None))
        usage = _usage(getattr(chunk, "usage", None))
        if usage is not None:
            self.usage = usage
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) != 0:
                continue
            delta = getattr(choice, "delta", None)
            if delta is not None:
                events.extend(self._feed_delta(delta))
            if getattr(choice, "finish_reason", None):
                self.finished = True
        return events

    def _feed_delta(self, delta: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        reasoning = _reasoning_delta(delta)
        if reasoning:
            events.append(base.ReasoningSummaryDelta(None, reasoning))
        content = getattr(delta, "content", None)
        if content and self.envelope is not None:
            self.text.append(content)
            content = self.envelope.feed(content)
            if content and not self.envelope.started:
                self.envelope.started = True
                events.append(base.OutputItemAdded(protocol.Message(role="assistant", content=[])))
            if content:
                events.append(base.OutputTextDelta(None, content))
        elif content:
            if not self.text:
                events.append(base.OutputItemAdded(protocol.Message(role="assistant", content=[])))
            self.text.append(content)
            events.append(base.OutputTextDelta(None, content))
        for call in getattr(delta, "tool_calls", None) or []:
            key = int(getattr(call, "index", 0) or 0)
            acc = self.calls.get(key)
            call_id = getattr(call, "id", None)
            if acc is not None and call_id and acc.call_id and call_id != acc.call_id:
                key = max(self.calls) + 1  # a server that numbers every call 0
                acc = None
            if acc is None:
                acc = self.calls[key] = _CallAcc()
            function = getattr(call, "function", None)
            if call_id and not acc.call_id:
                acc.call_id = call_id
            if function is not None:
                if getattr(function, "name", None):
                    acc.name = function.name
                if getattr(function, "arguments", None):
                    acc.arguments.append(function.arguments)
        return events

    def output_items(self) -> list[ResponseItem]:
        items: list[ResponseItem] = []
        text = "".join(self.text)
        if self.envelope is not None:
            cut = self.envelope.cut_message()  # a reply stopped by the token limit
            if cut is not None:
                return [assistant_message(cut)]
            call_id = f"call_{self.response_id or 'chat'}_0"
            return (
                [parse_envelope(text, call_id=call_id, custom_tools=self.custom_tools)]
                if text
                else []
            )
        if text:
            items.append(assistant_message(text))
        for index, acc in sorted(self.calls.items()):
            call_id = acc.call_id or f"call_{self.response_id or 'chat'}_{index}"
            arguments = "".join(acc.arguments)
            if acc.name in self.custom_tools:
                items.append(
                    protocol.CustomToolCall(
                        name=acc.name, input=_custom_input(arguments), call_id=call_id
                    )
                )
            else:
                items.append(
                    protocol.FunctionCall(name=acc.name, arguments=arguments, call_id=call_id)
                )
        return items


# --- the client ---------------------------------------------------------------------------------


class ChatCompletionsClient(OpenAISdkClient):
    """``ModelClient`` for ``POST /chat/completions`` (one instance per session)."""

    tool_calling: Literal["native", "envelope"] = "native"
    """``[model_providers.NAME].tool_calling``: native ``tools``, or the JSON envelope."""

    @classmethod
    def from_options(
        cls, options: ModelClientOptions, *, http_client: httpx2.AsyncClient | None = None
    ) -> Self:
        client = super().from_options(options, http_client=http_client)
        client.tool_calling = options.provider.tool_calling
        return client

    def _envelope(self, prompt: Prompt) -> bool:
        return self.tool_calling == "envelope" and bool(chat_tools(prompt.tools)[0])

    def request_body(self, prompt: Prompt) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` (without ``stream``)."""
        tools, _ = chat_tools(prompt.tools)
        if self._envelope(prompt):
            instructions = "\n\n".join(
                text for text in (prompt.instructions, envelope_instructions(tools)) if text
            )
            return {
                "model": prompt.model,
                "messages": chat_messages(instructions, envelope_history(prompt.input)),
                "stream_options": {"include_usage": True},
                "response_format": envelope_response_format(tools),
            }
        body: dict[str, Any] = {
            "model": prompt.model,
            "messages": chat_messages(prompt.instructions, prompt.input),
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = tools
            body["parallel_tool_calls"] = prompt.parallel_tool_calls
        if prompt.output_schema is not None:
            format_ = json_schema_format(prompt.output_schema)
            body["response_format"] = {"type": "json_schema", "json_schema": {
                key: value for key, value in format_.items() if key != "type"}}  # fmt: skip
        return body

    def request_bytes(self, prompt: Prompt) -> bytes:
        """The JSON body the SDK would send for ``request_body`` (with ``stream``)."""
        return chat_request_bytes(self.request_body(prompt))

    async def _send(self, body: dict[str, Any]) -> Any:
        """POST ``body``; the stream of its chunks (an object with ``close()``)."""
        return await post_chat_stream(self._post, body)

    async def _create(self, prompt: Prompt) -> Any:
        body = self.request_body(prompt)
        try:
            with map_openai_errors(self.access):
                return await self._send(body)
        except ProviderError as err:
            if "tools" in body and tools_rejected(err):
                raise ToolsNotSupported(
                    f"{self.access.label} does not accept tool definitions for model "
                    f"{prompt.model!r}, and mini-codex needs tool calling. Use a model and "
                    "server with tool (function) calling enabled (for example vLLM with "
                    "--enable-auto-tool-choice --tool-call-parser, llama.cpp with --jinja). "
                    f"Server said: {err}",
                    status=err.status,
                ) from err
            raise

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        sdk_stream = await self._create(prompt)
        acc = _Accumulator(custom_tools=chat_tools(prompt.tools)[1])
        if self._envelope(prompt):
            acc.envelope = MessageStreamer()
        try:
            iterator = aiter(sdk_stream)
            while (
                chunk := await next_event(iterator, self.idle_timeout_s, self.access)
            ) is not None:
                for event in acc.feed(chunk):
                    yield event
        finally:
            with anyio.CancelScope(shield=True):
                await sdk_stream.close()
        if not acc.finished:
            raise stream_closed_early()
        outputs = acc.output_items()
        for item in outputs:
            yield base.OutputItemDone(item)
        usage = acc.usage
        if usage is None:
            usage = await anyio.to_thread.run_sync(
                estimate_usage, prompt, tuple(outputs), self.token_cache
            )
        yield base.Completed(acc.response_id or None, usage)


__all__ = [
    "CUSTOM_TOOL_ARGUMENT",
    "ChatCompletionsClient",
    "ToolsNotSupported",
    "chat_messages",
    "chat_tools",
    "tools_rejected",
]
