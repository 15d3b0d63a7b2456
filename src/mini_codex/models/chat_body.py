"""The Chat Completions request as bytes, sent through the SDK's raw request path (issue 13).

``chat_request_bytes(body)`` encodes the keyword arguments of ``chat.completions.create`` (plus
``stream``) exactly as the SDK would (key order ``CHAT_KEY_ORDER``), without its per-field
transform. ``messages`` are built by ``chat_completions.chat_messages`` and hold only strings,
so orjson encodes them in one call with the SDK's bytes; the other fields go through
``request_body.dumps`` (floats in tool or output schemas are written by the standard encoder).
"""

from __future__ import annotations

from typing import Any

import openai
import orjson
from openai import AsyncStream

from mini_codex.models.request_body import CHAT_KEY_ORDER, dumps, join_object
from mini_codex.models.sdk_raw import post_stream


def chat_request_bytes(body: dict[str, Any]) -> bytes:
    """``body`` (``ChatCompletionsClient.request_body``) with ``stream: true``, as JSON bytes."""
    fields = dict(body)
    fields["stream"] = True
    messages = fields.get("messages")
    if messages is not None:
        try:
            fields["messages"] = orjson.dumps(messages)
        except (TypeError, orjson.JSONEncodeError):
            fields["messages"] = dumps(messages)
    return join_object(fields, CHAT_KEY_ORDER)


async def post_chat_stream(
    client: openai.AsyncOpenAI, body: dict[str, Any], headers: dict[str, Any]
) -> AsyncStream[object]:
    """POST ``body`` to ``/chat/completions``; the SDK's stream of decoded JSON chunks (read
    them through ``sse_view.view``)."""
    return await post_stream(
        client,
        "/chat/completions",
        chat_request_bytes(body),
        cast_to=object,
        stream_cls=AsyncStream[object],
        headers=headers,
    )


__all__ = ["chat_request_bytes", "post_chat_stream"]
