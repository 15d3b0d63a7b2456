"""``models.http_post``: our own POST + SSE reading does what the ``openai`` SDK's path did.

The SSE decoder is checked against the SDK's own decoder (the oracle) on random streams split
at random points; the retry policy against the SDK's rules; requests and errors against a real
local server (``fake_openai_server``) and a closed port.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import anyio
import httpx2
import pytest
from fake_openai_server import Reply, error_reply, serve, sse_reply
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.models.errors import (
    ConnectionFailed,
    QuotaExceeded,
    ServerError,
    StreamError,
    Timeout,
)
from mini_codex.models.http_post import (
    HttpPost,
    PostTarget,
    SseDecoder,
    retry_after_s,
    retry_delay_s,
    should_retry,
)
from mini_codex.models.request_body import ChunkedBody

_FIXED_LINES = ["", ": comment", "event: x", "data", "data:", "id: 7", "retry: 5",
                "retry: no", "data: [DONE]", "id: a\0b", "other: 1"]  # fmt: skip
_LINES = st.lists(
    st.one_of(
        st.sampled_from(_FIXED_LINES),
        st.builds(lambda v: f"data: {v}", st.text(alphabet='ab{}":é', max_size=6)),
    ),
    max_size=12,
)


def _sdk_events(raw: bytes) -> list[tuple[str | None, str]]:
    from openai._streaming import SSEDecoder

    return [(sse.event, sse.data) for sse in SSEDecoder().iter_bytes(iter([raw]))]


def _our_events(chunks: list[bytes]) -> list[tuple[str | None, str]]:
    decoder = SseDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    events += decoder.finish()
    return [(None if e is None else e.decode(), d.decode()) for e, d in events]


@settings(max_examples=300, deadline=None)
@given(
    lines=_LINES,
    ends=st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=12, max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
    tail=st.booleans(),
)
def test_sse_decoding_equals_the_sdks(
    lines: list[str], ends: list[str], cuts: list[int], tail: bool
) -> None:
    text = "".join(line + end for line, end in zip(lines, ends, strict=False))
    if tail:
        text += "data: last"
    raw = text.encode()
    points = sorted({min(cut, len(raw)) for cut in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert _our_events([c for c in chunks if c]) == _sdk_events(raw)


def test_retry_rules_follow_the_sdk() -> None:
    assert [should_retry(s, httpx2.Headers()) for s in (400, 401, 408, 409, 429, 500, 503)] == [
        False, False, True, True, True, True, True,
    ]  # fmt: skip
    assert should_retry(400, httpx2.Headers({"x-should-retry": "true"}))
    assert not should_retry(503, httpx2.Headers({"x-should-retry": "false"}))
    assert not should_retry(429, httpx2.Headers({"retry-after": "121"}))
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    date = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_s(httpx2.Headers({"retry-after": date}), now=now.timestamp()) == 30.0
    assert retry_after_s(httpx2.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    assert retry_after_s(httpx2.Headers({"retry-after": "soon"})) is None
    assert retry_delay_s(0, httpx2.Headers({"retry-after": "2.5"})) == 2.5
    for attempt, cap in [(0, 0.5), (1, 1.0), (2, 2.0), (5, 8.0), (40, 8.0)]:
        delays = [retry_delay_s(attempt, httpx2.Headers({"retry-after": "0"})) for _ in range(50)]
        assert all(0.75 * cap <= delay <= cap for delay in delays)


async def _collect(post: HttpPost, body: bytes | ChunkedBody) -> list[Any]:
    stream = await post.stream("/responses", body)
    try:
        return [event async for event in stream]
    finally:
        await stream.close()


@pytest.mark.anyio
async def test_retries_resend_the_same_bytes_and_honour_retry_after() -> None:
    replies = [
        error_reply(503, {"message": "busy"}, headers={"retry-after-ms": "10"}),
        error_reply(429, {"message": "slow down"}, headers={"retry-after": "0.01"}),
        sse_reply([{"type": "a", "n": 1}, {"type": "b"}]),
    ]
    with serve(replies) as server:
        target = PostTarget(base_url=server.url, api_key="k", max_retries=2,
                            query_params={"v": "1"})  # fmt: skip
        post = HttpPost(target)
        try:
            events = await _collect(post, ChunkedBody([b'{"a":', b"1}"]))
        finally:
            await post.aclose()
        requests = list(server.requests)
    assert events == [{"type": "a", "n": 1}, {"type": "b"}]
    assert [r.raw for r in requests] == [b'{"a":1}'] * 3
    assert [r.headers["x-stainless-retry-count"] for r in requests] == ["0", "1", "2"]
    assert [r.query for r in requests] == [{"v": ["1"]}] * 3


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("reply", "error", "message"),
    [
        (error_reply(500, {"message": "boom"}), ServerError, "server error (HTTP 500): boom"),
        (error_reply(429, {"code": "insufficient_quota", "message": "pay"}), QuotaExceeded,
         None),
        (Reply(headers={"content-type": "text/event-stream"},
               chunks=[b'data: {"error": {"code": "server_error", "message": "died"}}\n\n']),
         ServerError, None),
        (Reply(headers={"content-type": "text/event-stream"}, chunks=[b"data: {nope\n\n"]),
         StreamError, "malformed data in the response stream: Expecting property name enclosed "
         "in double quotes: line 1 column 2 (char 1)"),
    ],
    ids=["500", "quota", "error-event", "bad-json"],
)  # fmt: skip
async def test_failures_become_the_classified_errors(
    reply: Reply, error: type[Exception], message: str | None
) -> None:
    with serve([reply]) as server:
        post = HttpPost(PostTarget(base_url=server.url, max_retries=0))
        try:
            with pytest.raises(error) as raised:
                await _collect(post, b"{}")
        finally:
            await post.aclose()
    if message is not None:
        assert str(raised.value) == message


@pytest.mark.anyio
async def test_a_closed_port_and_a_silent_server_are_connection_failed_and_timeout() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    post = HttpPost(PostTarget(base_url=f"http://127.0.0.1:{port}/v1", max_retries=0))
    try:
        with pytest.raises(ConnectionFailed, match=r"^connection failed: "):
            await _collect(post, b"{}")
    finally:
        await post.aclose()
    with serve([Reply(status=200, delay_s=2.0)]) as server:
        post = HttpPost(PostTarget(base_url=server.url, max_retries=0, idle_timeout_s=0.2))
        try:
            with pytest.raises(Timeout, match=r"^the request timed out$"):
                await _collect(post, b"{}")
        finally:
            await post.aclose()


@pytest.mark.anyio
async def test_done_ends_the_stream_even_if_the_server_keeps_the_body_open() -> None:
    chunks = [b'data: {"n": 1}\n\n', b"data: [DONE]\n\n", b'data: {"n": 2}\n\n']
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=chunks, stall_s=3.0)
    with serve([reply]) as server:
        post = HttpPost(PostTarget(base_url=server.url, max_retries=0, idle_timeout_s=10))
        try:
            with anyio.fail_after(2.0):  # the drain after [DONE] gives up after 0.1 s
                events = await _collect(post, b"{}")
        finally:
            await post.aclose()
    assert events == [{"n": 1}]
