"""Server-sent events of a streamed response: decoding (``SseDecoder``) and the stream of each
event's decoded JSON (``EventStream``), as ``models.http_post`` reads them (see its docstring for
the rules: line ends, fields, ``data: [DONE]``, error events)."""

from __future__ import annotations

import json
import re
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import anyio
import httpx2
import orjson

from mini_codex.models.errors import ConnectionFailed, ProviderError, StreamError, Timeout
from mini_codex.models.retry import classify_stream_failure

__all__ = [
    "DRAIN_TIMEOUT_S",
    "TRANSPORT_ERRORS",
    "EventStream",
    "SseDecoder",
    "decode_json",
    "event_failure",
    "transport_error",
]

DRAIN_TIMEOUT_S = 0.1
TRANSPORT_ERRORS = (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream)
_LINE_END = re.compile(rb"\r\n|\r|\n")


def transport_error(exc: BaseException) -> ProviderError:
    """``Timeout`` or ``ConnectionFailed`` for an exception of the HTTP transport."""
    if isinstance(exc, httpx2.TimeoutException):
        return Timeout("the request timed out")
    return ConnectionFailed(f"connection failed: {exc}")


def event_failure(data: Any) -> ProviderError | None:
    """A stream event carrying ``{"error": ...}`` (what the SDK raised as its ``APIError``)."""
    if not isinstance(data, dict) or not data.get("error"):
        return None
    error = data["error"]
    message = error.get("message") if isinstance(error, dict) else None
    if not message or not isinstance(message, str):
        message = "An error occurred during streaming"
    code = error.get("code") if isinstance(error, dict) else None
    return classify_stream_failure(str(code) if code is not None else None, message)


def decode_json(data: bytes) -> Any:
    """One event's data as JSON; ``StreamError`` when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:  # the standard parser: what orjson refuses (NaN) or its message for the error
        return json.loads(data)
    except ValueError as exc:
        raise StreamError(f"malformed data in the response stream: {exc}") from exc


class SseDecoder:
    """Incremental SSE decoding: ``feed(chunk)`` returns the data of each completed event."""

    def __init__(self) -> None:
        self._partial: list[bytes] = []
        self._skip_lf = False
        self._event: bytes | None = None
        self._data: list[bytes] = []
        self._last_id: bytes | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[tuple[bytes | None, bytes]]:
        """The ``(event name, data)`` of every event completed by ``chunk``."""
        events: list[tuple[bytes | None, bytes]] = []
        start = 0
        if self._skip_lf and chunk[:1] == b"\n":
            start = 1
        self._skip_lf = False
        for match in _LINE_END.finditer(chunk, start):
            line = chunk[start : match.start()]
            if self._partial:
                line = b"".join((*self._partial, line))
                self._partial.clear()
            start = match.end()
            if match.group() == b"\r" and start == len(chunk):
                self._skip_lf = True  # a CRLF split across chunks
            event = self._line(line)
            if event is not None:
                events.append(event)
        if start < len(chunk):
            self._partial.append(chunk[start:])
        return events

    def finish(self) -> list[tuple[bytes | None, bytes]]:
        """The event completed by a last line without a line end (as the SDK does)."""
        if not self._partial:
            return []
        line = b"".join(self._partial)
        self._partial.clear()
        event = self._line(line)
        return [] if event is None else [event]

    def _line(self, line: bytes) -> tuple[bytes | None, bytes] | None:
        if not line:
            if not (self._event or self._data or self._last_id or self._retry is not None):
                return None
            event = (self._event or None, b"\n".join(self._data))
            self._event, self._data, self._retry = None, [], None
            return event
        if line[:1] == b":":
            return None
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        match name:
            case b"event":
                self._event = value
            case b"data":
                self._data.append(value)
            case b"id":
                if b"\0" not in value:
                    self._last_id = value
            case b"retry":
                try:
                    self._retry = int(value)
                except ValueError:
                    pass
        return None


class EventStream:
    """Each event of one streamed response, decoded by ``decode`` (by default its JSON, an
    ``{"error": ...}`` event raising its error); ``close()`` releases it."""

    def __init__(
        self, response: httpx2.Response, decode: Callable[[bytes], Any] | None = None
    ) -> None:
        self.response = response
        self._decode = decode or self._decoded
        self._events = self._iterate()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._events

    async def _iterate(self) -> AsyncGenerator[Any, None]:
        decoder = SseDecoder()
        chunks = self.response.aiter_bytes()
        try:
            async for chunk in chunks:
                for _, data in decoder.feed(chunk):
                    if data.startswith(b"[DONE]"):
                        await self._drain(chunks)
                        return
                    yield self._decode(data)
            for _, data in decoder.finish():
                if data.startswith(b"[DONE]"):
                    return
                yield self._decode(data)
        except TRANSPORT_ERRORS as exc:
            raise transport_error(exc) from exc
        finally:
            await self.response.aclose()

    async def _drain(self, chunks: AsyncIterator[bytes]) -> None:
        """After ``[DONE]``: read what follows for a short while (HTTP/1.1 reuses the
        connection then), never failing the finished stream."""
        if self.response.http_version != "HTTP/1.1":
            return
        try:
            with anyio.move_on_after(DRAIN_TIMEOUT_S):
                async for _ in chunks:
                    await anyio.lowlevel.checkpoint()
        except TRANSPORT_ERRORS:
            pass

    @staticmethod
    def _decoded(data: bytes) -> Any:
        value = decode_json(data)
        failure = event_failure(value)
        if failure is not None:
            raise failure
        return value

    async def close(self) -> None:
        await self._events.aclose()
        await self.response.aclose()


# --- the client ---------------------------------------------------------------------------------
