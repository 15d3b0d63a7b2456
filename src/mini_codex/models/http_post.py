"""POST a pre-serialized JSON body and read its server-sent events, without the ``openai`` SDK.

Both OpenAI-protocol providers send bodies that are already bytes (``request_body``), so the SDK
only carried them over HTTP: importing it cost ~0.3 s before the first request byte (issue 13).
``HttpPost`` does on ``httpx2`` what the SDK's request path did for them (facts read from
``openai`` 3.57, ``_base_client.py`` / ``_streaming.py``):

* **Request**: ``POST base_url + path`` with the provider's ``query_params``; headers
  ``Authorization: Bearer KEY`` (only when there is a key), ``Accept: application/json``,
  ``Content-Type: application/json``, ``User-Agent``, ``OpenAI-Organization`` /
  ``OpenAI-Project`` when given, the provider's ``http_headers`` (they win) and
  ``x-stainless-retry-count`` (the attempt number, as the SDK sends it). A ``ChunkedBody`` goes
  with its exact ``Content-Length`` and is rewound for every attempt: each retry resends the same
  bytes. Timeouts: read/write/pool = the idle timeout, connect = min(idle, 10 s).
* **Request retries** (the SDK's policy, ``max_retries`` = ``request_max_retries``): transport
  errors and timeouts, and HTTP 408, 409, 429 and >= 500 (``x-should-retry: true/false``
  overrides the status; a ``Retry-After`` over 120 s means no retry). The delay is the server's
  ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date) when 0 < d <= 120 s, else
  min(0.5 s * 2^attempt, 8 s) minus up to 25 % jitter.
* **Errors** are ``models.errors`` classes, unlabeled (``openai_sdk.map_openai_errors`` names the
  provider): a non-success status → ``classify_http_status`` (body text and Retry-After);
  timeouts → ``Timeout("the request timed out")``; other transport failures →
  ``ConnectionFailed``; a stream event whose JSON has a truthy ``error`` →
  ``classify_stream_failure``; malformed JSON → ``StreamError``.
* **SSE** (``SseDecoder``): lines end in CR, LF or CRLF; ``event``/``data``/``id``/``retry``
  fields, multi-line data joined with LF, ``:`` comments; an event is dispatched on a blank line
  when any field was seen (the last event id is kept, as the SDK does). ``data: [DONE]`` ends the
  stream (what follows is read for at most 0.1 s, for connection reuse). Each event's data is
  decoded as JSON and yielded as is. The decoding lives in ``models/sse.py``.

Not carried over (documented in the README): ``OPENAI_CUSTOM_HEADERS`` (use ``http_headers``),
the SDK's platform headers (``X-Stainless-OS`` …), the Assistants ``thread.*`` event envelope.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
import msgspec

from mini_codex._version import __version__
from mini_codex.models.errors import ProviderError
from mini_codex.models.lazy_tls import async_client
from mini_codex.models.request_body import ChunkedBody
from mini_codex.models.retry import classify_http_status
from mini_codex.models.sse import TRANSPORT_ERRORS, EventStream, SseDecoder, transport_error

INITIAL_RETRY_DELAY_S = 0.5
MAX_RETRY_DELAY_S = 8.0
MAX_RETRY_AFTER_S = 120.0
RETRY_STATUSES = frozenset({408, 409, 429})
USER_AGENT = f"mini-codex/{__version__}"

_INFINITY = ("inf", "+inf", "infinity", "+infinity")


class PostTarget(msgspec.Struct, frozen=True):
    """Where and how one provider's requests go (built once per client)."""

    base_url: str
    api_key: str | None = None
    http_headers: Mapping[str, str] = msgspec.field(default_factory=dict)
    query_params: Mapping[str, str] = msgspec.field(default_factory=dict)
    organization: str | None = None
    project: str | None = None
    max_retries: int = 2
    idle_timeout_s: float = 300.0
    connect_timeout_s: float = 10.0

    def headers(self) -> dict[str, str]:
        """The request headers before the per-attempt ones (the provider's win, any case)."""
        base: dict[str, str] = {}
        if self.api_key:
            base["Authorization"] = f"Bearer {self.api_key}"
        base["Accept"] = "application/json"
        base["Content-Type"] = "application/json"
        base["User-Agent"] = USER_AGENT
        if self.organization is not None:
            base["OpenAI-Organization"] = self.organization
        if self.project is not None:
            base["OpenAI-Project"] = self.project
        custom = {name.lower() for name in self.http_headers}
        merged = {name: value for name, value in base.items() if name.lower() not in custom}
        merged.update(self.http_headers)
        return merged

    def timeout(self) -> httpx2.Timeout:
        return httpx2.Timeout(
            self.idle_timeout_s, connect=min(self.idle_timeout_s, self.connect_timeout_s)
        )


# --- retry policy -------------------------------------------------------------------------------


def retry_after_s(headers: httpx2.Headers, *, now: float | None = None) -> float | None:
    """The server's requested delay: ``retry-after-ms``, ``retry-after`` seconds or HTTP date."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value)
        except ValueError:
            continue
        if delay == math.inf and value.strip().lower() not in _INFINITY:
            return MAX_RETRY_AFTER_S + 1  # an overflowing number: too long, not malformed
        return delay / divisor
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        parsed = email.utils.parsedate_tz(raw)
        if parsed is None:
            return None
        when = email.utils.mktime_tz(parsed)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return float(when - (time.time() if now is None else now))


def should_retry(status: int, headers: httpx2.Headers) -> bool:
    """Whether a failed response is worth another attempt (the SDK's rules)."""
    delay = retry_after_s(headers)
    if delay is not None and math.isfinite(delay) and delay > MAX_RETRY_AFTER_S:
        return False
    match headers.get("x-should-retry"):
        case "true":
            return True
        case "false":
            return False
    return status in RETRY_STATUSES or status >= 500


def retry_delay_s(attempt: int, headers: httpx2.Headers | None) -> float:
    """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
    if headers is not None:
        delay = retry_after_s(headers)
        if delay is not None and math.isfinite(delay) and 0 < delay <= MAX_RETRY_AFTER_S:
            return delay
    backoff = min(INITIAL_RETRY_DELAY_S * 2.0 ** min(attempt, 1000), MAX_RETRY_DELAY_S)
    return max(backoff * (1 - 0.25 * random.random()), 0.0)


# --- errors -------------------------------------------------------------------------------------


def retry_after_text(headers: httpx2.Headers) -> str | None:
    """The ``Retry-After`` value for ``classify_http_status`` (``retry-after-ms`` first)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return str(float(millis) / 1000.0)
        except ValueError:
            pass
    return headers.get("retry-after")


def status_error(response: httpx2.Response) -> ProviderError:
    """The classified error of a non-success response whose body has been read."""
    text = response.text
    return classify_http_status(
        response.status_code,
        text if text.strip() else None,
        retry_after_text(response.headers),
        now=datetime.now(UTC),
    )


class HttpPost:
    """One provider's HTTP client: ``stream(path, body)`` sends and returns the event stream."""

    def __init__(self, target: PostTarget, http_client: httpx2.AsyncClient | None = None) -> None:
        self.target = target
        self._headers = target.headers()
        self._timeout = target.timeout()
        self._client = http_client or async_client(timeout=self._timeout, follow_redirects=True)

    async def stream(
        self,
        path: str,
        body: bytes | ChunkedBody,
        decode: Callable[[bytes], Any] | None = None,
    ) -> EventStream:
        """POST ``body`` (JSON bytes, or pieces of them) to ``path``, with request retries; the
        stream of its events, each decoded by ``decode`` (``EventStream``)."""
        headers = dict(self._headers)
        if isinstance(body, ChunkedBody):
            headers["Content-Length"] = str(body.length)
        url = f"{self.target.base_url.rstrip('/')}/{path.lstrip('/')}"
        params = dict(self.target.query_params) or None
        max_retries = self.target.max_retries
        for attempt in range(max_retries + 1):
            retries_left = max_retries - attempt
            headers["x-stainless-retry-count"] = str(attempt)
            if isinstance(body, ChunkedBody):
                body.seek(0)
            request = self._client.build_request(
                "POST", url, params=params, headers=headers, content=body, timeout=self._timeout
            )
            try:
                response = await self._client.send(request, stream=True)
            except TRANSPORT_ERRORS as exc:
                if retries_left > 0:
                    await anyio.sleep(retry_delay_s(attempt, None))
                    continue
                raise transport_error(exc) from exc
            if response.is_success:
                return EventStream(response, decode)
            if retries_left > 0 and should_retry(response.status_code, response.headers):
                await response.aclose()
                await anyio.sleep(retry_delay_s(attempt, response.headers))
                continue
            try:
                await response.aread()
            except TRANSPORT_ERRORS as exc:
                raise transport_error(exc) from exc
            finally:
                await response.aclose()
            raise status_error(response)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def aclose(self) -> None:
        await self._client.aclose()


__all__ = [
    "EventStream",
    "HttpPost",
    "PostTarget",
    "SseDecoder",
    "retry_after_text",
    "transport_error",
]
