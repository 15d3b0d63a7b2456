"""The request bytes of a history item straight from its rollout line (Responses API, issue 30).

What belongs here: :func:`encoded_request_line`, which turns a whole ``response_item`` rollout
line into the bytes ``openai_responses.encoded_request_json`` gives for its payload, for the
items a resumed history is made of (function calls, their string outputs, text messages). What
does not: the general shaping of items (``openai_responses.item_shape``), which is the reference
this module must agree with byte for byte, and which every other line goes through.

Why: a resumed session of 300k rollout lines sends ~120k replayed items in its first request.
Parsing each line into Python objects (``orjson``), shaping a new dict and encoding it again
costs more than the rest of the resume. A msgspec decoder reads just the fields the request
sends into a struct whose encoding is the request item itself: one C call to decode (the other
fields are skipped), one to encode.

The contract: for a line the fold kept (it parsed with ``orjson`` and its payload is a valid
item), the result is either None (take the general path) or exactly
``encoded_request_json(orjson.loads(line)["payload"])``. It holds because

* the structs declare the fields ``item_shape`` picks, in the order it writes them, the tag
  first; a field ``item_shape`` leaves out when None is omitted when None (``omit_defaults``)
  and every other field is required, so a null or missing value is refused;
* every value is typed ``str``: anything else (a float, a list output, an image part) is
  refused, and for strings msgspec writes what ``orjson`` writes (UTF-8, the same escapes);
* unknown fields (``id``, ``status``, metadata) are skipped, as ``item_shape`` drops them;
  a duplicated key keeps its last value in both parsers, and a duplicated ``type`` naming
  another item is refused by msgspec;
* a text part without ``text`` is written with ``""`` (``text`` defaults to it and is always
  written), as ``item_shape``'s ``part.get("text", "")``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Union

import msgspec

__all__ = ["LINE_ENCODERS", "encoded_request_line", "encoded_request_lines"]


class _InputText(msgspec.Struct, tag="input_text", tag_field="type", gc=False):
    text: str = ""


class _OutputText(msgspec.Struct, tag="output_text", tag_field="type", gc=False):
    text: str = ""


class _Message(
    msgspec.Struct, tag="message", tag_field="type", kw_only=True, omit_defaults=True, gc=False
):
    role: str
    phase: str | None = None
    content: list[_InputText | _OutputText]


class _FunctionCall(
    msgspec.Struct,
    tag="function_call",
    tag_field="type",
    kw_only=True,
    omit_defaults=True,
    gc=False,
):
    name: str
    namespace: str | None = None
    arguments: str
    call_id: str


class _FunctionCallOutput(msgspec.Struct, tag="function_call_output", tag_field="type", gc=False):
    call_id: str
    output: str


class _CustomToolCallOutput(
    msgspec.Struct, tag="custom_tool_call_output", tag_field="type", gc=False
):
    call_id: str
    output: str


class _Line(msgspec.Struct, gc=False):
    payload: Union[_Message, _FunctionCall, _FunctionCallOutput, _CustomToolCallOutput]  # noqa: UP007


@functools.cache
def _codec() -> tuple[Callable[[bytes], Any], Callable[[bytes], Any], Callable[[Any], bytes]]:
    return (
        msgspec.json.Decoder(_Line).decode,
        msgspec.json.Decoder(list[_Line]).decode,
        msgspec.json.Encoder().encode,
    )


def encoded_request_line(raw: bytes) -> bytes | None:
    """The request bytes of the item of the ``response_item`` line ``raw`` (see the module
    docstring), or None when this fast path does not take it (the caller shapes its JSON)."""
    decode, _, encode = _codec()
    try:
        payload = decode(raw).payload
    except msgspec.MsgspecError:
        return None
    return encode(payload)


def encoded_request_lines(lines: list[bytes]) -> bytes | None:
    """``encoded_request_line`` of every line of ``lines``, comma-joined (the inside of their
    JSON array: msgspec writes an array's elements as it writes each alone, with ``,`` between
    them), in one decode and one encode; None when the fast path does not take one of them."""
    _, decode_many, encode = _codec()
    try:
        decoded = decode_many(b"[" + b",".join(lines) + b"]")
    except msgspec.MsgspecError:
        return None
    return encode([line.payload for line in decoded])[1:-1]


LINE_ENCODERS = (encoded_request_line, encoded_request_lines)
"""``InputPieces``' ``encode_line`` and ``encode_lines`` for the Responses API."""
