"""Tool calls for chat models without native tool calling: a JSON-schema-constrained envelope.

When a server cannot take ``tools`` (small local models, chat templates without tool support),
the Chat Completions provider asks instead for a reply constrained by a ``response_format``
JSON schema (llama.cpp turns it into a grammar, so the model *cannot* answer anything else). The
schema is generated from the step's tool list; its variants are:

* ``{"message": "TEXT"}``: the final answer, mapped to an assistant ``Message``;
* ``{"tool": "NAME", "arguments": {...}}``, one variant per tool with that tool's parameter
  schema, mapped to a ``FunctionCall`` (or a ``CustomToolCall`` for a freeform tool, whose one
  argument is ``input``).

A reply holds one call (no parallel calls in this mode). The history is rewritten to the same
shape, so the model sees its own earlier replies as envelopes: tool calls become assistant
envelopes, assistant text becomes ``{"message": ...}``, tool outputs become user messages naming
the tool (with a nudge to answer once the task is done: small models otherwise repeat the call).
The tool catalog and the reply rules are appended to the system prompt
(``prompts/tool_envelope.md``). A reply that does not parse (cut by a token limit, a server
ignoring the schema) is kept as plain assistant text, never lost.

``MessageStreamer`` decodes the ``message`` string while it streams, so the final answer is still
shown delta by delta. Pure: no I/O besides reading the prompt file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from string import Template
from typing import Any

from mini_codex.protocol.items import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    Message,
    ResponseItem,
    assistant_message,
    message_text,
    user_message,
)

MESSAGE_KEY = "message"
TOOL_KEY = "tool"
ARGUMENTS_KEY = "arguments"
CUSTOM_TOOL_ARGUMENT = "input"
"""The one string argument a freeform tool takes (as in ``chat_completions``)."""

OUTPUT_FOLLOW_UP = (
    'The tool has run. Now reply with {"message": "..."} to tell the user the result, unless '
    "the task needs a different tool call."
)
"""Appended to every tool output: small models otherwise tend to repeat the same call."""

_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def envelope_schema(functions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The reply schema for chat function specs (``chat_tools`` output): one variant each."""
    variants: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {MESSAGE_KEY: {"type": "string"}},
            "required": [MESSAGE_KEY],
            "additionalProperties": False,
        }
    ]
    for spec in functions:
        function = spec["function"]
        variants.append(
            {
                "type": "object",
                "properties": {
                    TOOL_KEY: {"type": "string", "enum": [function["name"]]},
                    ARGUMENTS_KEY: function.get("parameters") or _EMPTY_PARAMETERS,
                },
                "required": [TOOL_KEY, ARGUMENTS_KEY],
                "additionalProperties": False,
            }
        )
    return {"anyOf": variants}


def envelope_response_format(functions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``response_format`` request field constraining replies to ``envelope_schema``."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "reply", "strict": True, "schema": envelope_schema(functions)},
    }


def envelope_instructions(functions: Sequence[dict[str, Any]]) -> str:
    """The reply rules and the tool catalog, appended to the system prompt."""
    sections = []
    for spec in functions:
        function = spec["function"]
        parameters = json.dumps(function.get("parameters") or _EMPTY_PARAMETERS)
        sections.append(
            f"## {function['name']}\n\n{function.get('description', '').strip()}\n\n"
            f"Arguments (JSON schema): {parameters}"
        )
    template = files("mini_codex.models").joinpath("prompts", "tool_envelope.md").read_text("utf-8")
    return Template(template).substitute(tools="\n\n".join(sections) or "(none)").strip()


# --- history ------------------------------------------------------------------------------------


def _arguments_value(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _envelope_text(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _output_text(output: str | list[dict[str, Any]]) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))


def envelope_history(items: Sequence[ResponseItem]) -> list[ResponseItem]:
    """History with calls and outputs as plain messages (see the module docstring)."""
    names: dict[str, str] = {}
    result: list[ResponseItem] = []
    for item in items:
        match item:
            case FunctionCall(call_id=call_id, arguments=arguments):
                name = item.qualified_name
                names[call_id] = name
                payload = {TOOL_KEY: name, ARGUMENTS_KEY: _arguments_value(arguments)}
                result.append(assistant_message(_envelope_text(payload)))
            case CustomToolCall(call_id=call_id, name=name, input=text):
                names[call_id] = name
                payload = {TOOL_KEY: name, ARGUMENTS_KEY: {CUSTOM_TOOL_ARGUMENT: text}}
                result.append(assistant_message(_envelope_text(payload)))
            case (
                FunctionCallOutput(call_id=call_id, output=output)
                | CustomToolCallOutput(call_id=call_id, output=output)
            ):
                if call_id in names:
                    result.append(
                        user_message(
                            f"Output of the {names[call_id]} tool call:\n{_output_text(output)}"
                            f"\n\n{OUTPUT_FOLLOW_UP}"
                        )
                    )
            case Message(role="assistant"):
                text = message_text(item)
                result.append(assistant_message(_envelope_text({MESSAGE_KEY: text})))
            case _:
                result.append(item)
    return result


# --- replies ------------------------------------------------------------------------------------


def parse_envelope(text: str, *, call_id: str, custom_tools: frozenset[str]) -> ResponseItem:
    """The item a reply stands for; anything that is not a valid envelope stays assistant text."""
    try:
        reply = json.loads(text)
    except ValueError:
        return assistant_message(text)
    if not isinstance(reply, dict):
        return assistant_message(text)
    name = reply.get(TOOL_KEY)
    arguments = reply.get(ARGUMENTS_KEY)
    if isinstance(name, str) and name and isinstance(arguments, dict):
        if name in custom_tools and isinstance(arguments.get(CUSTOM_TOOL_ARGUMENT), str):
            return CustomToolCall(name=name, input=arguments[CUSTOM_TOOL_ARGUMENT], call_id=call_id)
        return FunctionCall(name=name, arguments=json.dumps(arguments), call_id=call_id)
    message = reply.get(MESSAGE_KEY)
    if isinstance(message, str) and set(reply) == {MESSAGE_KEY}:
        return assistant_message(message)
    return assistant_message(text)


_MESSAGE_START = re.compile(r'\s*\{\s*"message"\s*:\s*"')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


@dataclass
class MessageStreamer:
    """Decodes the ``message`` string of an envelope while it streams ('' until it is one)."""

    buffer: str = ""
    decoded: str = ""
    """All message text decoded so far."""
    position: int | None = None
    """Index in ``buffer`` of the next undecoded character of the string, once inside it."""
    done: bool = False
    started: bool = False
    """Set by the caller once it announced the message item."""
    pending_surrogate: str = ""

    def feed(self, piece: str) -> str:
        """Append ``piece``; return the newly decoded message text ('' when none)."""
        self.buffer += piece
        if self.done:
            return ""
        if self.position is None:
            match = _MESSAGE_START.match(self.buffer)
            if match is None:
                return ""
            self.position = match.end()
        out: list[str] = []
        i = self.position
        while i < len(self.buffer):
            char = self.buffer[i]
            if char == '"':
                self.done = True
                i += 1
                break
            if char != "\\":
                out.append(char)
                i += 1
                continue
            if i + 1 >= len(self.buffer):
                break  # wait for the rest of the escape
            code = self.buffer[i + 1]
            if code == "u":
                if i + 6 > len(self.buffer):
                    break
                out.append(self._unicode(self.buffer[i + 2 : i + 6]))
                i += 6
                continue
            out.append(_ESCAPES.get(code, code))
            i += 2
        self.position = i
        text = "".join(out)
        self.decoded += text
        return text

    def cut_message(self) -> str | None:
        """The text shown so far of a message whose string never closed (None otherwise)."""
        return self.decoded if self.position is not None and not self.done else None

    def _unicode(self, digits: str) -> str:
        try:
            value = int(digits, 16)
        except ValueError:
            return ""
        if 0xD800 <= value < 0xDC00:
            self.pending_surrogate = chr(value)
            return ""
        if 0xDC00 <= value < 0xE000 and self.pending_surrogate:
            pair = (self.pending_surrogate + chr(value)).encode("utf-16", "surrogatepass")
            self.pending_surrogate = ""
            return pair.decode("utf-16")
        return chr(value)


__all__ = [
    "MessageStreamer",
    "envelope_history",
    "envelope_instructions",
    "envelope_response_format",
    "envelope_schema",
    "parse_envelope",
]
