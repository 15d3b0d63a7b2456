"""Retry policy and failure classification for model requests (spec codex-runtime §4.2). Pure.

* ``backoff_delay``: 200 ms × 2^(n−1) × jitter, jitter drawn by the caller in [0.9, 1.1); a delay
  requested by the server (``Retry-After``, "try again in 1.5s") replaces it.
* ``RetryPolicy``: at most ``max_retries`` retries (default 5, hard cap 100) of retryable errors.
* ``classify_http_status`` / ``classify_stream_failure``: map an HTTP status + body, or a streamed
  ``response.failed`` error code, to the error classes of ``models.errors``.

No clock, no randomness, no sleeping here: ``now`` and ``jitter`` are arguments, and the runtime
does the waiting.
"""

from __future__ import annotations

import json
import random
import re
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

import msgspec

from mini_codex.errors import ConfigError, ModelError
from mini_codex.models import errors
from mini_codex.models.errors import ProviderError

INITIAL_DELAY_S = 0.2
BACKOFF_FACTOR = 2.0
JITTER_MIN = 0.9
JITTER_MAX = 1.1
DEFAULT_STREAM_MAX_RETRIES = 5
MAX_RETRIES_CAP = 100
DEFAULT_MAX_BACKOFF_S = 60.0
"""Upper bound on a computed (not server-requested) delay, so a high retry count stays sane."""

_MAX_EXPONENT = 64  # 0.2 s × 2^64 is already beyond any cap; avoids float overflow.


def draw_jitter(rng: random.Random) -> float:
    """A jitter factor in [0.9, 1.1) from the caller's random source."""
    return min(JITTER_MIN + (JITTER_MAX - JITTER_MIN) * rng.random(), JITTER_MAX - 1e-12)


def backoff_delay(attempt: int, jitter: float, retry_after_s: float | None = None) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based).

    ``retry_after_s`` (a delay the server asked for) wins over the computed backoff.
    """
    if attempt < 1:
        raise ValueError(f"retry attempt must be >= 1, got {attempt}")
    if not JITTER_MIN <= jitter < JITTER_MAX:
        raise ValueError(f"jitter must be in [{JITTER_MIN}, {JITTER_MAX}), got {jitter}")
    if retry_after_s is not None:
        return max(0.0, retry_after_s)
    exponent = min(attempt - 1, _MAX_EXPONENT)
    return INITIAL_DELAY_S * BACKOFF_FACTOR**exponent * jitter


class RetryPolicy(msgspec.Struct, frozen=True):
    """How often and how long to retry a failed sampling request."""

    max_retries: int = DEFAULT_STREAM_MAX_RETRIES
    """Requested retries (``stream_max_retries``); clamped to ``cap``."""
    cap: int = MAX_RETRIES_CAP
    max_backoff_s: float = DEFAULT_MAX_BACKOFF_S

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"stream_max_retries must be >= 0, got {self.max_retries}")
        if self.max_retries > self.cap:
            msgspec.structs.force_setattr(self, "max_retries", self.cap)

    def should_retry(self, error: BaseException, retries_done: int) -> bool:
        """True when ``error`` is a retryable ``ModelError`` and retries remain."""
        return isinstance(error, ModelError) and error.retryable and retries_done < self.max_retries

    def delay_s(self, error: BaseException, attempt: int, jitter: float) -> float:
        """Delay before retry ``attempt``: the server's request if any, else capped backoff."""
        retry_after = error.retry_after_s if isinstance(error, ProviderError) else None
        if retry_after is not None:
            return backoff_delay(attempt, jitter, retry_after)
        return min(backoff_delay(attempt, jitter), self.max_backoff_s)

    def notice(self, attempt: int) -> str:
        """The user-visible line of a retry: ``Reconnecting... n/max``."""
        return f"Reconnecting... {attempt}/{self.max_retries}"


# --- Retry-After --------------------------------------------------------------------------------


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header: delay-seconds or an HTTP date (needs ``now``).

    Past dates and negative numbers give 0.0; anything unparsable (or a date without ``now``)
    gives None.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None  # NaN is unparsable
    if now is None:
        return None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None or now.tzinfo is None:
        return None
    return max(0.0, (when - now).total_seconds())


_TRY_AGAIN_RE = re.compile(r"try again in\s*(\d+(?:\.\d+)?)\s*(ms|s|seconds?)\b", re.IGNORECASE)


def parse_try_again_in(message: str | None) -> float | None:
    """Seconds from a rate-limit message such as "Please try again in 1.898s" or "in 20ms"."""
    if not message:
        return None
    match = _TRY_AGAIN_RE.search(message)
    if match is None:
        return None
    value = float(match.group(1))
    return value / 1000.0 if match.group(2).lower() == "ms" else value


# --- classification -----------------------------------------------------------------------------

_QUOTA_CODES = frozenset(
    {
        "insufficient_quota",
        "insufficient_quota_org",
        "insufficient_quota_project",
        "insufficient_quota_user",
    }
)
_QUOTA_PHRASES = frozenset({"exceeded your current quota"})
_USAGE_LIMIT_CODES = frozenset({"usage_limit_reached", "usage_not_included"})
_INVALID_CODES = frozenset({"invalid_prompt", "invalid_request_error"})
_RATE_LIMIT_CODES = frozenset({"rate_limit_exceeded"})
_OVERLOAD_CODES = frozenset({"server_is_overloaded", "slow_down", "server_error"})
_CONTEXT_CODES = frozenset({"context_length_exceeded", "context_window_exceeded"})
_CONTEXT_PHRASES = (
    "maximum context length",
    "context_length_exceeded",
    "context window",
    "exceeds the available context size",
    "prompt is too long",
)
_MAX_DETAIL_CHARS = 500


class _ErrorDetails(msgspec.Struct, frozen=True):
    codes: frozenset[str]
    """``error.code`` and ``error.type`` of the body, lower-cased."""
    message: str
    """The server's message, or the (shortened) raw body."""


def _error_details(body_text: str | None) -> _ErrorDetails:
    if not body_text or not body_text.strip():
        return _ErrorDetails(frozenset(), "")
    try:
        body: Any = json.loads(body_text)
    except ValueError:
        return _ErrorDetails(frozenset(), _shorten(body_text.strip()))
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, str):
        return _ErrorDetails(frozenset(), _shorten(error))
    if not isinstance(error, dict):
        return _ErrorDetails(frozenset(), _shorten(body_text.strip()))
    codes = frozenset(
        value.lower() for key in ("code", "type") if isinstance(value := error.get(key), str)
    )
    message = error.get("message", error.get("detail"))
    return _ErrorDetails(codes, _shorten(message if isinstance(message, str) else body_text))


def _shorten(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _MAX_DETAIL_CHARS else text[: _MAX_DETAIL_CHARS - 1] + "…"


def _with_detail(base: str, detail: str) -> str:
    return f"{base}: {detail}" if detail else base


def _has_code(details: _ErrorDetails, codes: frozenset[str]) -> bool:
    """True when the body carries one of ``codes`` as code/type, or names it in its text."""
    lowered = details.message.lower()
    return bool(details.codes & codes) or any(code in lowered for code in codes)


def _is_context_error(details: _ErrorDetails) -> bool:
    lowered = details.message.lower()
    return bool(details.codes & _CONTEXT_CODES) or any(p in lowered for p in _CONTEXT_PHRASES)


def classify_http_status(
    status: int,
    body_text: str | None,
    retry_after: str | None,
    *,
    now: datetime | None = None,
) -> ProviderError:
    """The error for a non-success HTTP response (``now`` is needed for HTTP-date Retry-After)."""
    if 200 <= status < 300:
        raise ValueError(f"HTTP {status} is a success status, not an error")
    details = _error_details(body_text)
    delay = parse_retry_after(retry_after, now=now)
    if status == 429:
        if _has_code(details, _QUOTA_CODES | _QUOTA_PHRASES):
            return errors.QuotaExceeded(
                _with_detail(errors.QuotaExceeded.DEFAULT_MESSAGE, details.message), status=status
            )
        if _has_code(details, _USAGE_LIMIT_CODES):
            return errors.UsageLimitReached(
                _with_detail(errors.UsageLimitReached.DEFAULT_MESSAGE, details.message),
                status=status,
            )
        return errors.RateLimited(
            _with_detail("rate limited (HTTP 429)", details.message),
            status=status,
            retry_after_s=delay if delay is not None else parse_try_again_in(details.message),
        )
    if status in (401, 403):
        return errors.AuthenticationError(
            _with_detail(f"invalid API key or missing permissions (HTTP {status})", details.message)
            + ". Check the API key configured for this provider.",
            status=status,
        )
    if status in (400, 413) and _is_context_error(details):
        return errors.ContextWindowExceeded(status=status)
    if status == 408:
        return errors.Timeout(
            _with_detail("request timed out (HTTP 408)", details.message), status=status
        )
    if 400 <= status < 500:
        return errors.InvalidRequest(
            _with_detail(f"invalid request (HTTP {status})", details.message), status=status
        )
    if status >= 500:
        return errors.ServerError(
            _with_detail(f"server error (HTTP {status})", details.message),
            status=status,
            retry_after_s=delay,
        )
    return errors.ServerError(
        _with_detail(f"unexpected HTTP status {status}", details.message),
        status=status,
        retry_after_s=delay,
    )


def classify_stream_failure(code: str | None, message: str | None) -> ProviderError:
    """The error for a failure reported inside a stream (``response.failed`` / ``error`` event)."""
    detail = (message or "").strip()
    details = _ErrorDetails(frozenset({code.lower()}) if code else frozenset(), detail)
    if _is_context_error(details):
        return errors.ContextWindowExceeded()
    if _has_code(details, _QUOTA_CODES | _QUOTA_PHRASES):
        return errors.QuotaExceeded(_with_detail(errors.QuotaExceeded.DEFAULT_MESSAGE, detail))
    if _has_code(details, _USAGE_LIMIT_CODES):
        return errors.UsageLimitReached(
            _with_detail(errors.UsageLimitReached.DEFAULT_MESSAGE, detail)
        )
    if details.codes & _INVALID_CODES:
        return errors.InvalidRequest(_with_detail("invalid request", detail))
    if details.codes & _RATE_LIMIT_CODES:
        return errors.RateLimited(
            _with_detail("rate limited", detail), retry_after_s=parse_try_again_in(detail)
        )
    if details.codes & _OVERLOAD_CODES:
        return errors.ServerError(
            _with_detail("the model provider is overloaded or failing", detail)
        )
    return errors.StreamError(detail or "response.failed without a message")
