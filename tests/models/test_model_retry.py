"""Retry policy (backoff table, cap, Retry-After) and the classification of provider failures."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_codex.errors import ConfigError, ModelError
from mini_codex.models import (
    CONTEXT_WINDOW_EXCEEDED_MESSAGE,
    STREAM_CLOSED_EARLY,
    AuthenticationError,
    ConnectionFailed,
    ContextWindowExceeded,
    InvalidRequest,
    ProviderError,
    QuotaExceeded,
    RateLimited,
    RetryPolicy,
    ServerError,
    StreamError,
    Timeout,
    UsageLimitReached,
    backoff_delay,
    classify_http_status,
    classify_stream_failure,
    draw_jitter,
    parse_retry_after,
    parse_try_again_in,
    stream_closed_early,
)

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


Summary = tuple[type[ProviderError], str, bool, int | None, float | None]


def _summary(error: ProviderError) -> Summary:
    """Class, message, retryable, status, retry_after_s: everything a caller looks at."""
    return (type(error), str(error), error.retryable, error.status, error.retry_after_s)


# --- backoff ------------------------------------------------------------------------------------


def test_backoff_table_without_jitter_is_200_400_800_1600_3200_ms() -> None:
    assert [backoff_delay(n, 1.0) for n in range(1, 6)] == [0.2, 0.4, 0.8, 1.6, 3.2]


@pytest.mark.parametrize(("attempt", "base_s"), [(1, 0.2), (2, 0.4), (3, 0.8), (4, 1.6), (5, 3.2)])
def test_backoff_stays_within_ten_percent_for_the_extreme_jitters(
    attempt: int, base_s: float
) -> None:
    low, high = backoff_delay(attempt, 0.9), backoff_delay(attempt, 1.1 - 1e-9)
    assert [low, high] == pytest.approx([base_s * 0.9, base_s * 1.1])


@given(st.integers(min_value=1, max_value=30), st.randoms(use_true_random=False))
def test_drawn_jitter_keeps_every_delay_in_the_band(attempt: int, rng: random.Random) -> None:
    jitter = draw_jitter(rng)
    base = 0.2 * 2 ** (attempt - 1)
    assert 0.9 <= jitter < 1.1
    assert base * 0.9 <= backoff_delay(attempt, jitter) < base * 1.1


def test_server_requested_delay_replaces_the_backoff() -> None:
    assert backoff_delay(3, 1.05, retry_after_s=7.5) == 7.5
    assert backoff_delay(1, 1.0, retry_after_s=-3.0) == 0.0


@pytest.mark.parametrize(("attempt", "jitter"), [(0, 1.0), (1, 0.89), (1, 1.1), (-2, 1.0)])
def test_backoff_rejects_bad_attempt_or_jitter(attempt: int, jitter: float) -> None:
    with pytest.raises(ValueError, match="must be"):
        backoff_delay(attempt, jitter)


def test_backoff_for_huge_attempts_does_not_overflow() -> None:
    assert backoff_delay(5000, 1.0) == 0.2 * 2.0**64


# --- policy -------------------------------------------------------------------------------------


def test_default_policy_retries_five_times() -> None:
    policy = RetryPolicy()
    error = stream_closed_early()
    assert [policy.should_retry(error, done) for done in range(7)] == [True] * 5 + [False] * 2


def test_max_retries_is_clamped_to_the_hard_cap_of_100() -> None:
    assert RetryPolicy(max_retries=1000) == RetryPolicy(max_retries=100)
    assert RetryPolicy(max_retries=1000).max_retries == 100


def test_negative_max_retries_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="stream_max_retries must be >= 0, got -1"):
        RetryPolicy(max_retries=-1)


def test_zero_retries_never_retries() -> None:
    assert RetryPolicy(max_retries=0).should_retry(ServerError(), 0) is False


@pytest.mark.parametrize(
    "error",
    [
        ContextWindowExceeded(),
        UsageLimitReached(),
        QuotaExceeded(),
        InvalidRequest(),
        AuthenticationError(),
        ModelError("scripted model has no response left"),
        RuntimeError("not a model error"),
    ],
)
def test_non_retryable_errors_are_never_retried(error: BaseException) -> None:
    assert RetryPolicy().should_retry(error, 0) is False


@pytest.mark.parametrize(
    "error",
    [
        StreamError(),
        RateLimited(),
        ServerError(),
        ConnectionFailed(),
        Timeout(),
        ModelError("x", retryable=True),
    ],
)
def test_retryable_errors_are_retried(error: BaseException) -> None:
    assert RetryPolicy().should_retry(error, 4) is True


def test_policy_delay_honours_retry_after_and_caps_computed_backoff() -> None:
    policy = RetryPolicy(max_retries=100, max_backoff_s=60.0)
    assert policy.delay_s(ServerError(), 2, 1.0) == 0.4
    assert policy.delay_s(ServerError(), 30, 1.0) == 60.0
    assert policy.delay_s(RateLimited(retry_after_s=120.0), 1, 1.0) == 120.0
    assert policy.delay_s(ModelError("x", retryable=True), 3, 1.0) == 0.8


def test_retry_notice_matches_codex_wording() -> None:
    assert RetryPolicy().notice(2) == "Reconnecting... 2/5"


# --- Retry-After ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("3", 3.0),
        (" 120 ", 120.0),
        ("1.5", 1.5),
        ("-4", 0.0),
        ("Mon, 30 Nov 2026 12:00:30 GMT", 30.0),
        ("Mon, 30 Nov 2026 11:59:00 GMT", 0.0),
        ("soon", None),
        ("", None),
        ("nan", None),
        (None, None),
    ],
)
def test_retry_after_seconds_and_http_date(header: str | None, expected: float | None) -> None:
    assert parse_retry_after(header, now=NOW) == expected


def test_retry_after_http_date_without_now_is_ignored() -> None:
    assert parse_retry_after("Mon, 30 Nov 2026 12:00:30 GMT") is None


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Rate limit reached. Please try again in 1.898s. Visit ...", 1.898),
        ("Please try again in 28ms.", 0.028),
        ("Try again in 35 seconds.", 35.0),
        ("slow down", None),
        (None, None),
    ],
)
def test_try_again_in_from_rate_limit_messages(message: str | None, expected: float | None) -> None:
    assert parse_try_again_in(message) == expected


# --- HTTP status classification -------------------------------------------------------------------


def _body(code: str | None, message: str, kind: str = "invalid_request_error") -> str:
    code_json = "null" if code is None else f'"{code}"'
    return f'{{"error": {{"message": "{message}", "type": "{kind}", "code": {code_json}}}}}'


def test_429_rate_limit_is_retryable_with_retry_after_seconds() -> None:
    error = classify_http_status(429, _body("rate_limit_exceeded", "Slow down."), "2", now=NOW)
    assert _summary(error) == (RateLimited, "rate limited (HTTP 429): Slow down.", True, 429, 2.0)


def test_429_rate_limit_with_http_date_retry_after() -> None:
    error = classify_http_status(429, None, "Mon, 30 Nov 2026 12:00:05 GMT", now=NOW)
    assert _summary(error) == (RateLimited, "rate limited (HTTP 429)", True, 429, 5.0)


def test_429_without_header_takes_the_delay_from_the_message() -> None:
    body = _body("rate_limit_exceeded", "Please try again in 250ms.")
    error = classify_http_status(429, body, None)
    assert _summary(error) == (
        RateLimited,
        "rate limited (HTTP 429): Please try again in 250ms.",
        True,
        429,
        0.25,
    )


def test_429_insufficient_quota_is_not_retryable() -> None:
    body = _body("insufficient_quota", "You exceeded your current quota.", "insufficient_quota")
    error = classify_http_status(429, body, "1")
    assert _summary(error) == (
        QuotaExceeded,
        "Quota exceeded. Check your plan and billing details.: You exceeded your current quota.",
        False,
        429,
        None,
    )
    assert isinstance(error, UsageLimitReached)


def test_429_quota_named_only_in_plain_text_is_not_retryable() -> None:
    error = classify_http_status(429, "insufficient_quota", None)
    assert (type(error), error.retryable) == (QuotaExceeded, False)


def test_429_usage_limit_reached_is_not_retryable() -> None:
    body = _body(None, "The usage limit has been reached", "usage_limit_reached")
    error = classify_http_status(429, body, None)
    assert _summary(error) == (
        UsageLimitReached,
        "You've hit your usage limit. Try again later.: The usage limit has been reached",
        False,
        429,
        None,
    )


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failures_say_invalid_api_key(status: int) -> None:
    body = _body("invalid_api_key", "Incorrect API key provided: sk-abc***.")
    error = classify_http_status(status, body, None)
    assert _summary(error) == (
        AuthenticationError,
        f"invalid API key or missing permissions (HTTP {status}): Incorrect API key provided: "
        "sk-abc***.. Check the API key configured for this provider.",
        False,
        status,
        None,
    )


@pytest.mark.parametrize(
    "body",
    [
        _body("context_length_exceeded", "Your input exceeds the context window of this model."),
        _body(None, "This model's maximum context length is 8192 tokens."),
        '{"error": {"message": "the request exceeds the available context size", "code": 400}}',
        "context_length_exceeded",
    ],
)
def test_400_context_length_is_context_window_exceeded(body: str) -> None:
    error = classify_http_status(400, body, None)
    assert _summary(error) == (
        ContextWindowExceeded,
        CONTEXT_WINDOW_EXCEEDED_MESSAGE,
        False,
        400,
        None,
    )


def test_context_window_message_is_ours() -> None:
    assert str(ContextWindowExceeded()) == (
        "mini-codex ran out of room in the model's context window. "
        "Start a new session or clear earlier history before retrying."
    )


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (400, _body("invalid_value", "Unknown parameter: 'foo'."), "Unknown parameter: 'foo'."),
        (404, '{"detail": "model not found"}', "model not found"),
        (422, "not json at all", "not json at all"),
        (400, '{"error": "plain string error"}', "plain string error"),
        (400, "[1, 2]", "[1, 2]"),
    ],
)
def test_other_4xx_are_invalid_requests(status: int, body: str, message: str) -> None:
    error = classify_http_status(status, body, None)
    assert _summary(error) == (
        InvalidRequest,
        f"invalid request (HTTP {status}): {message}",
        False,
        status,
        None,
    )


def test_408_is_a_retryable_timeout() -> None:
    assert _summary(classify_http_status(408, "", None)) == (
        Timeout,
        "request timed out (HTTP 408)",
        True,
        408,
        None,
    )


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_5xx_are_retryable_server_errors(status: int) -> None:
    error = classify_http_status(status, _body(None, "oops", "server_error"), "4")
    expected = (ServerError, f"server error (HTTP {status}): oops", True, status, 4.0)
    assert _summary(error) == expected


def test_unexpected_status_is_a_retryable_server_error() -> None:
    error = classify_http_status(302, None, None)
    assert _summary(error) == (ServerError, "unexpected HTTP status 302", True, 302, None)


def test_success_status_is_not_an_error() -> None:
    with pytest.raises(ValueError, match="HTTP 200 is a success status"):
        classify_http_status(200, None, None)


def test_long_bodies_are_shortened_in_messages() -> None:
    error = classify_http_status(400, "x" * 2000, None)
    assert str(error) == "invalid request (HTTP 400): " + "x" * 499 + "…"


# --- stream failure classification ------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (
            "context_length_exceeded",
            "Your input exceeds the context window of this model.",
            (ContextWindowExceeded, CONTEXT_WINDOW_EXCEEDED_MESSAGE, False, None, None),
        ),
        (
            "insufficient_quota",
            "You exceeded your current quota.",
            (
                QuotaExceeded,
                "Quota exceeded. Check your plan and billing details.: "
                "You exceeded your current quota.",
                False,
                None,
                None,
            ),
        ),
        (
            "usage_not_included",
            "Not included in your plan.",
            (
                UsageLimitReached,
                "You've hit your usage limit. Try again later.: Not included in your plan.",
                False,
                None,
                None,
            ),
        ),
        (
            "invalid_prompt",
            "Invalid prompt: flagged.",
            (InvalidRequest, "invalid request: Invalid prompt: flagged.", False, None, None),
        ),
        (
            "rate_limit_exceeded",
            "Rate limit reached. Please try again in 11.054s.",
            (
                RateLimited,
                "rate limited: Rate limit reached. Please try again in 11.054s.",
                True,
                None,
                11.054,
            ),
        ),
        (
            "server_is_overloaded",
            "",
            (ServerError, "the model provider is overloaded or failing", True, None, None),
        ),
        ("weird_code", "boom", (StreamError, "boom", True, None, None)),
        (None, None, (StreamError, "response.failed without a message", True, None, None)),
    ],
)
def test_stream_failures_are_classified(
    code: str | None, message: str | None, expected: tuple[object, ...]
) -> None:
    assert _summary(classify_stream_failure(code, message)) == expected


def test_stream_closed_early_is_a_retryable_stream_error() -> None:
    error = stream_closed_early()
    assert _summary(error) == (
        StreamError,
        "stream closed before response.completed",
        True,
        None,
        None,
    )
    assert STREAM_CLOSED_EARLY == "stream closed before response.completed"
    assert stream_closed_early() is not error


def test_provider_errors_are_model_errors_with_a_readable_repr() -> None:
    error = RateLimited("slow", status=429, retry_after_s=1.5)
    assert isinstance(error, ModelError)
    assert repr(error) == "RateLimited('slow', status=429, retry_after_s=1.5)"
    assert repr(Timeout()) == "Timeout('the model request timed out')"
