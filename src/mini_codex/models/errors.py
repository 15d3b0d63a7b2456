"""Classified model-provider errors (spec codex-runtime §4.2).

Every provider translates its foreign failures (HTTP status, SSE ``response.failed``, socket errors)
into one of these at its own boundary; the sampling loop looks only at ``retryable`` and at the two
classes that end a turn specially (``ContextWindowExceeded``, ``UsageLimitReached``).

::

    ModelError (mini_codex.errors)       retryable flag carried
    └── ProviderError                    + status, retry_after_s; retryable fixed per class
        ├── StreamError           retry   stream cut / failed mid-way; may carry a server delay
        ├── RateLimited           retry   HTTP 429 without a quota/usage-limit code
        ├── ServerError           retry   HTTP 5xx (and unexpected statuses)
        ├── ConnectionFailed      retry   could not connect / connection reset
        ├── Timeout               retry   request or stream-idle timeout
        ├── ContextWindowExceeded  no     input does not fit the model's context window
        ├── UsageLimitReached      no     plan usage limit reached
        │   └── QuotaExceeded      no     API quota / billing exhausted
        ├── InvalidRequest         no     other 4xx
        └── AuthenticationError    no     401 / 403

What does not belong here: deciding *whether and when* to retry (``models.retry``) and mapping a
status code to a class (``models.retry.classify_http_status``).
"""

from __future__ import annotations

from typing import ClassVar

from mini_codex.errors import ModelError

STREAM_CLOSED_EARLY = "stream closed before response.completed"
"""Message of the retryable ``StreamError`` raised when a stream ends without ``Completed``."""

CONTEXT_WINDOW_EXCEEDED_MESSAGE = (
    "mini-codex ran out of room in the model's context window. "
    "Start a new session or clear earlier history before retrying."
)


class ProviderError(ModelError):
    """A classified provider failure; whether it is retryable is a property of the class."""

    RETRYABLE: ClassVar[bool] = False
    DEFAULT_MESSAGE: ClassVar[str] = "model request failed"

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message or self.DEFAULT_MESSAGE, retryable=self.RETRYABLE)
        self.status = status
        """HTTP status of the failed request, when there was one."""
        self.retry_after_s = retry_after_s
        """Delay the server asked for (Retry-After, "try again in 1.5s"); overrides the backoff."""

    @property
    def message(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        extra = "".join(
            f", {name}={value!r}"
            for name, value in (("status", self.status), ("retry_after_s", self.retry_after_s))
            if value is not None
        )
        return f"{type(self).__name__}({self.message!r}{extra})"


class StreamError(ProviderError):
    """The response stream failed or ended early; retried with the same step."""

    RETRYABLE = True
    DEFAULT_MESSAGE = STREAM_CLOSED_EARLY


class RateLimited(ProviderError):
    """HTTP 429 (or ``rate_limit_exceeded``) that is not a quota or usage limit."""

    RETRYABLE = True
    DEFAULT_MESSAGE = "rate limited by the model provider"


class ServerError(ProviderError):
    """The provider failed (HTTP 5xx or an unexpected status)."""

    RETRYABLE = True
    DEFAULT_MESSAGE = "the model provider returned a server error"


class ConnectionFailed(ProviderError):
    """The provider could not be reached."""

    RETRYABLE = True
    DEFAULT_MESSAGE = "could not connect to the model provider"


class Timeout(ProviderError):
    """The request or the stream (idle timeout) timed out."""

    RETRYABLE = True
    DEFAULT_MESSAGE = "the model request timed out"


class ContextWindowExceeded(ProviderError):
    """The input does not fit the model's context window; ends the turn, never retried."""

    DEFAULT_MESSAGE = CONTEXT_WINDOW_EXCEEDED_MESSAGE


class UsageLimitReached(ProviderError):
    """A plan usage limit was reached; ends the turn, never retried."""

    DEFAULT_MESSAGE = "You've hit your usage limit. Try again later."


class QuotaExceeded(UsageLimitReached):
    """The API quota or billing balance is exhausted."""

    DEFAULT_MESSAGE = "Quota exceeded. Check your plan and billing details."


class InvalidRequest(ProviderError):
    """The provider rejected the request (4xx other than auth, rate limit, context window)."""

    DEFAULT_MESSAGE = "the model provider rejected the request"


class AuthenticationError(ProviderError):
    """The API key is missing, invalid or lacks permission (401/403)."""

    DEFAULT_MESSAGE = (
        "invalid API key or missing permissions. Check the API key configured for this provider."
    )


def stream_closed_early() -> StreamError:
    """A fresh retryable ``StreamError("stream closed before response.completed")``."""
    return StreamError(STREAM_CLOSED_EARLY)
