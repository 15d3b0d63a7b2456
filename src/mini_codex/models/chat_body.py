"""The Chat Completions request as bytes, sent through ``models.http_post`` (issue 13).

``chat_request_bytes(body)`` encodes the keyword arguments of ``chat.completions.create`` (plus
``stream``) exactly as the SDK would (key order ``CHAT_KEY_ORDER``), without its per-field
transform. ``messages`` are built by ``chat_completions.chat_messages`` and hold only strings,
so orjson encodes them in one call with the SDK's bytes; the other fields go through
``request_body.dumps`` (floats in tool or output schemas are written by the standard encoder).
"""

from __future__ import annotations

from typing import Any

import orjson

from mini_codex.models.http_post import EventStream, HttpPost
from mini_codex.models.request_body import CHAT_KEY_ORDER, dumps, join_object
from mini_codex.models.stream_events import decode_chat_chunk


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


async def post_chat_stream(post: HttpPost, body: dict[str, Any]) -> EventStream:
    """POST ``body`` to ``/chat/completions``; the stream of its chunks, each decoded into a
    ``stream_events.ChatChunk``."""
    return await post.stream("/chat/completions", chat_request_bytes(body), decode_chat_chunk)


__all__ = ["chat_request_bytes", "post_chat_stream"]
