"""From fragments to model-visible messages, and a compact layout of what the model sees.

What belongs here: :func:`fragments_to_messages` (spec/codex-worldstate.md §4.1, upstream
``merge_contextual_fragments``) and :func:`format_model_visible_layout`, the one-line-per-item
description of a prompt used by snapshot tests. What does not: deciding which fragments to render
(``state.py``) or recording messages into history (``mini_codex.context``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import assert_never

from mini_codex import protocol
from mini_codex.protocol.items import ContentPart, ResponseItem
from mini_codex.world_state.fragment import Fragment

__all__ = ["LAYOUT_TEXT_LIMIT", "format_model_visible_layout", "fragments_to_messages"]

LAYOUT_TEXT_LIMIT = 60
"""Maximum number of characters of text shown per content part in a layout line."""


def fragments_to_messages(fragments: Iterable[Fragment]) -> list[protocol.Message]:
    """Turn rendered fragments into messages, in order.

    Consecutive fragments with the same role are merged into one message, one ``input_text``
    content item per fragment. A fragment with ``separate_message`` always becomes a message of
    its own and never takes part in merging.
    """
    messages: list[protocol.Message] = []
    role: str | None = None
    parts: list[ContentPart] = []

    def flush() -> None:
        if role is not None:
            messages.append(protocol.Message(role=role, content=list(parts)))
        parts.clear()

    for fragment in fragments:
        if fragment.separate_message:
            flush()
            role = None
            messages.append(
                protocol.Message(
                    role=fragment.role, content=[protocol.InputText(text=fragment.text)]
                )
            )
            continue
        if fragment.role != role:
            flush()
            role = fragment.role
        parts.append(protocol.InputText(text=fragment.text))
    flush()
    return messages


def format_model_visible_layout(items: Sequence[ResponseItem]) -> list[str]:
    """One normalized line per item (plus one per part of multi-part messages).

    Format, with ``NN`` the zero-padded index of the item::

        NN:message/<role>:<text>                 a message with one content part
        NN:message/<role>[<k>]:                  a message with k content parts, then per part
            [01] <text>                          (indented by four spaces, parts numbered from 01)
        NN:function_call/<name>
        NN:function_call_output:<text>
        NN:custom_tool_call/<name>
        NN:custom_tool_call_output:<text>
        NN:reasoning
        NN:<type>                                any other item type

    ``<text>`` is the first non-blank line of the part's text, stripped, cut to
    ``LAYOUT_TEXT_LIMIT`` characters. Images show as ``<image>``, unknown parts as ``<type>``,
    output that is a list of parts as ``<content>``.
    """
    lines: list[str] = []
    for index, item in enumerate(items):
        prefix = f"{index:02d}:"
        match item:
            case protocol.Message(role=role, content=content):
                if len(content) == 1:
                    lines.append(f"{prefix}message/{role}:{_part_text(content[0])}")
                else:
                    lines.append(f"{prefix}message/{role}[{len(content)}]:")
                    lines.extend(
                        f"    [{number:02d}] {_part_text(part)}"
                        for number, part in enumerate(content, start=1)
                    )
            case protocol.FunctionCall(name=name):
                lines.append(f"{prefix}function_call/{name}")
            case protocol.FunctionCallOutput(output=output):
                lines.append(f"{prefix}function_call_output:{_output_text(output)}")
            case protocol.CustomToolCall(name=name):
                lines.append(f"{prefix}custom_tool_call/{name}")
            case protocol.CustomToolCallOutput(output=output):
                lines.append(f"{prefix}custom_tool_call_output:{_output_text(output)}")
            case protocol.Reasoning():
                lines.append(f"{prefix}reasoning")
            case protocol.UnknownItem(type=kind):
                lines.append(f"{prefix}{kind}")
            case _:
                assert_never(item)
    return lines


def _first_line(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped[:LAYOUT_TEXT_LIMIT]
    return ""


def _part_text(part: ContentPart) -> str:
    match part:
        case protocol.InputText(text=text) | protocol.OutputText(text=text):
            return _first_line(text)
        case protocol.InputImage():
            return "<image>"
        case protocol.UnknownContent(type=kind):
            return f"<{kind}>"
        case _:
            assert_never(part)


def _output_text(output: object) -> str:
    return _first_line(output) if isinstance(output, str) else "<content>"
