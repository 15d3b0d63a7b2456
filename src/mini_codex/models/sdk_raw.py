"""The SDK's raw request path for a body that is already bytes (issue 13).

``post_stream`` sends ``body`` (bytes, or a ``ChunkedBody`` of pieces with its exact
``Content-Length``) through ``AsyncOpenAI.post(content=...)``: the same client, headers
(``Content-Type: application/json``, the per-request ``Authorization`` omission), request retries
and timeouts as ``responses.create`` / ``chat.completions.create``, and the same typed stream
(``stream_cls``), only without the SDK's per-field transform of the parameters. Errors are the
SDK's own; the caller maps them (``map_openai_errors``).

What does not belong here: building the body (``request_body`` and the providers).
"""

from __future__ import annotations

from typing import Any, TypeVar

import openai

from mini_codex.models.request_body import ChunkedBody

_Stream = TypeVar("_Stream", bound=openai.AsyncStream[Any])


async def post_stream(
    client: openai.AsyncOpenAI,
    path: str,
    body: bytes | ChunkedBody,
    *,
    cast_to: type[Any],
    stream_cls: type[_Stream],
    headers: dict[str, Any],
) -> _Stream:
    """POST ``body`` (JSON bytes, or pieces of them) to ``path``; the SDK's event stream."""
    if isinstance(body, ChunkedBody):
        headers = {**headers, "Content-Length": str(body.length)}
    options: Any = {"headers": headers, "security": {"bearer_auth": True}}
    content: Any = body
    stream: _Stream = await client.post(
        path, cast_to=cast_to, content=content, options=options, stream=True, stream_cls=stream_cls
    )
    return stream


__all__ = ["post_stream"]
