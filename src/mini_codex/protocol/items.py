"""Responses-API items: the model-visible history and the ``response_item`` rollout payloads.

Closed union on ``type`` with an ``UnknownItem`` fallback, so items written by newer producers
(``ghost_snapshot``, ``web_search_call``, ``local_shell_call``, ...) are preserved, not rejected.
Content parts follow the same pattern.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag, TypeAdapter

from mini_codex.protocol._base import WireModel

# --- content parts -------------------------------------------------------------------------------


class InputText(WireModel):
    type: Literal["input_text"] = "input_text"
    text: str


class OutputText(WireModel):
    type: Literal["output_text"] = "output_text"
    text: str


class InputImage(WireModel):
    type: Literal["input_image"] = "input_image"
    image_url: str | None = None
    detail: str | None = None


class UnknownContent(WireModel):
    """A content part of a type this version does not model; kept verbatim."""

    type: str


_CONTENT_TAGS = frozenset({"input_text", "output_text", "input_image"})


def _content_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in _CONTENT_TAGS else "unknown"


ContentPart: TypeAlias = Annotated[
    Annotated[InputText, Tag("input_text")]
    | Annotated[OutputText, Tag("output_text")]
    | Annotated[InputImage, Tag("input_image")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(_content_tag),
]

# --- items ---------------------------------------------------------------------------------------


class Message(WireModel):
    """A chat message. Roles seen: ``user``, ``assistant``, ``developer``, ``system``."""

    type: Literal["message"] = "message"
    role: str
    content: list[ContentPart]
    id: str | None = None


class Reasoning(WireModel):
    """A reasoning item; ``encrypted_content`` is carried back verbatim with ``store=false``."""

    type: Literal["reasoning"] = "reasoning"
    summary: list[dict[str, Any]] = Field(default_factory=list)
    content: list[dict[str, Any]] | None = None
    encrypted_content: str | None = None
    id: str | None = None


class FunctionCall(WireModel):
    type: Literal["function_call"] = "function_call"
    name: str
    arguments: str
    call_id: str
    id: str | None = None
    namespace: str | None = None
    """The tool namespace of the call (Codex 0.169's MCP tools: ``mcp__SERVER``); None for a
    flat name (core tools, Chat Completions, rollouts recorded before namespaces)."""

    @property
    def qualified_name(self) -> str:
        """The flat tool name: ``<namespace>__<name>``, or ``name`` without a namespace."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


class FunctionCallOutput(WireModel):
    """Output of a function call: a string, or (newer Codex) a list of content parts."""

    type: Literal["function_call_output"] = "function_call_output"
    call_id: str
    output: str | list[dict[str, Any]]


class CustomToolCall(WireModel):
    """A freeform tool call (for example ``apply_patch`` with a raw patch as ``input``)."""

    type: Literal["custom_tool_call"] = "custom_tool_call"
    name: str
    input: str
    call_id: str
    id: str | None = None


class CustomToolCallOutput(WireModel):
    type: Literal["custom_tool_call_output"] = "custom_tool_call_output"
    call_id: str
    output: str | list[dict[str, Any]]


class UnknownItem(WireModel):
    """A response item of a type this version does not model; kept verbatim."""

    type: str


_ITEM_TAGS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
    }
)


def _item_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in _ITEM_TAGS else "unknown"


ResponseItem: TypeAlias = Annotated[
    Annotated[Message, Tag("message")]
    | Annotated[Reasoning, Tag("reasoning")]
    | Annotated[FunctionCall, Tag("function_call")]
    | Annotated[FunctionCallOutput, Tag("function_call_output")]
    | Annotated[CustomToolCall, Tag("custom_tool_call")]
    | Annotated[CustomToolCallOutput, Tag("custom_tool_call_output")]
    | Annotated[UnknownItem, Tag("unknown")],
    Discriminator(_item_tag),
]

RESPONSE_ITEM_ADAPTER: TypeAdapter[ResponseItem] = TypeAdapter(ResponseItem)
RESPONSE_ITEMS_ADAPTER: TypeAdapter[list[ResponseItem]] = TypeAdapter(list[ResponseItem])


def parse_response_item(value: Any) -> ResponseItem:
    """Validate one JSON object as a response item (raises ``pydantic.ValidationError``)."""
    return RESPONSE_ITEM_ADAPTER.validate_python(value)


# --- helpers -------------------------------------------------------------------------------------


def user_message(text: str) -> Message:
    return Message(role="user", content=[InputText(text=text)])


def developer_message(text: str) -> Message:
    return Message(role="developer", content=[InputText(text=text)])


def assistant_message(text: str) -> Message:
    return Message(role="assistant", content=[OutputText(text=text)])


def message_text(item: Message) -> str:
    """Concatenated text of the text parts of a message."""
    return "".join(part.text for part in item.content if isinstance(part, InputText | OutputText))


def is_tool_call(item: ResponseItem) -> bool:
    return isinstance(item, FunctionCall | CustomToolCall)


def is_tool_output(item: ResponseItem) -> bool:
    return isinstance(item, FunctionCallOutput | CustomToolCallOutput)
