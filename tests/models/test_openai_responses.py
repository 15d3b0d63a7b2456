"""The Responses provider: the real ``openai`` client against recorded SSE bodies served by
``httpx2.MockTransport`` (hand-written from the Responses streaming event reference, in ``sse/``)
and against the scripted local HTTP server of ``fake_openai_server.py``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fake_openai_server import (
    Reply,
    error_reply,
    responses_events,
    serve,
    sse_reply,
    usage,
)

from mini_codex.config import ModelProviderConfig
from mini_codex.models import (
    Completed,
    Created,
    ModelClientOptions,
    ModelEvent,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    Prompt,
    ReasoningSummaryDelta,
    TokenUsage,
    ToolCallInputDelta,
)
from mini_codex.models.errors import (
    CONTEXT_WINDOW_EXCEEDED_MESSAGE,
    STREAM_CLOSED_EARLY,
    AuthenticationError,
    ConnectionFailed,
    ContextWindowExceeded,
    InvalidRequest,
    ProviderError,
    QuotaExceeded,
    RateLimited,
    ServerError,
    StreamError,
    Timeout,
)
from mini_codex.models.openai_responses import (
    OpenAIResponsesClient,
    request_input,
    supports_reasoning,
)
from mini_codex.models.tokens import estimate_usage
from mini_codex.protocol.items import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    Message,
    OutputText,
    Reasoning,
    UnknownItem,
    assistant_message,
    developer_message,
    parse_response_item,
    user_message,
)

pytestmark = pytest.mark.anyio

SSE_DIR = Path(__file__).parent / "sse"
Handler = Callable[[httpx2.Request], httpx2.Response]


def recorded(name: str) -> bytes:
    return (SSE_DIR / name).read_bytes()


def sse_response(body: bytes) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def options(
    *,
    base_url: str = "http://mock.test/v1",
    api_key: str | None = "sk-test",
    env_key: str | None = "OPENAI_API_KEY",
    provider_name: str = "openai",
    model: str = "gpt-5.1-codex",
    **settings: Any,
) -> ModelClientOptions:
    provider = ModelProviderConfig(base_url=base_url, env_key=env_key, **settings)
    return ModelClientOptions(
        model=model, provider_name=provider_name, provider=provider, api_key=api_key
    )


def mock_client(handler: Handler, **kwargs: Any) -> OpenAIResponsesClient:
    transport = httpx2.MockTransport(handler)
    return OpenAIResponsesClient.from_options(
        options(**kwargs), http_client=httpx2.AsyncClient(transport=transport)
    )


def prompt(model: str = "gpt-5.1-codex", **kwargs: Any) -> Prompt:
    return Prompt(
        model=model,
        instructions="You are a coding agent.",
        input=(user_message("hi"),),
        **kwargs,
    )


async def collect(client: Any, request: Prompt) -> list[ModelEvent]:
    try:
        return [event async for event in client.stream(request)]
    finally:
        await client.aclose()


async def failure(client: Any, request: Prompt) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await collect(client, request)
    return caught.value


SHELL_TOOL = {
    "type": "function",
    "name": "shell",
    "description": "Run a command.",
    "strict": False,
    "parameters": {"type": "object", "properties": {"command": {"type": "array"}}},
}
PATCH_TOOL = {"type": "custom", "name": "apply_patch", "description": "Apply a patch."}

# --- recorded bodies through MockTransport ------------------------------------------------------


async def test_text_response_maps_to_events_with_usage_and_end_turn() -> None:
    client = mock_client(lambda request: sse_response(recorded("responses_text.sse")))
    events = await collect(client, prompt())
    final = parse_response_item(
        {
            "type": "message",
            "id": "msg_text",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello from the Responses API."}],
        }
    )
    assert events == [
        Created("resp_text"),
        OutputItemAdded(Message(id="msg_text", role="assistant", content=[])),
        OutputTextDelta("msg_text", "Hello"),
        OutputTextDelta("msg_text", " from the Responses API."),
        OutputItemDone(final),
        Completed(
            "resp_text",
            TokenUsage(
                input_tokens=1234, cached_input_tokens=1024, output_tokens=9, total_tokens=1243
            ),
            end_turn=True,
        ),
    ]


async def test_reasoning_and_parallel_function_calls() -> None:
    client = mock_client(
        lambda request: sse_response(recorded("responses_reasoning_parallel_calls.sse"))
    )
    events = await collect(client, prompt(tools=(SHELL_TOOL,)))
    summary = "**Inspecting the repo**\n\nI'll list files and read both configs in parallel."
    reasoning = Reasoning(
        id="rs_calls",
        summary=[{"type": "summary_text", "text": summary}],
        encrypted_content="gAAAAABpQ2VuY3J5cHRlZC1yZWFzb25pbmctYmxvYg==",
    )
    calls = [
        FunctionCall(id=f"fc_{n}", name="shell", arguments=args, call_id=call_id)
        for n, call_id, args in [
            (1, "call_ls", '{"command":["ls","-la"]}'),
            (2, "call_cat_a", '{"command":["cat","pyproject.toml"]}'),
            (3, "call_cat_b", '{"command":["cat","setup.cfg"]}'),
        ]
    ]
    assert [e for e in events if isinstance(e, ReasoningSummaryDelta)] == [
        ReasoningSummaryDelta("rs_calls", "**Inspecting the repo**\n\nI'll list"),
        ReasoningSummaryDelta("rs_calls", " files and read both configs in parallel."),
    ]
    assert [e.item for e in events if isinstance(e, OutputItemDone)] == [reasoning, *calls]
    assert events[-1] == Completed(
        "resp_calls",
        TokenUsage(
            input_tokens=2048, output_tokens=180, reasoning_output_tokens=128, total_tokens=2228
        ),
    )


async def test_custom_tool_call_input_deltas_carry_the_call_id() -> None:
    client = mock_client(lambda request: sse_response(recorded("responses_custom_tool_call.sse")))
    events = await collect(client, prompt(tools=(PATCH_TOOL,)))
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch"
    assert events[1:-1] == [
        OutputItemAdded(
            CustomToolCall(
                id="ctc_1", status="in_progress", call_id="call_patch", name="apply_patch", input=""
            )
        ),
        ToolCallInputDelta("call_patch", "*** Begin Patch\n*** Add File: hello.txt\n"),
        ToolCallInputDelta("call_patch", "+hello\n*** End Patch"),
        OutputItemDone(
            CustomToolCall(
                id="ctc_1",
                status="completed",
                call_id="call_patch",
                name="apply_patch",
                input=patch,
            )
        ),
    ]


async def test_stream_cut_before_completed_is_a_retryable_stream_error() -> None:
    client = mock_client(lambda request: sse_response(recorded("responses_cut.sse")))
    error = await failure(client, prompt())
    assert type(error) is StreamError
    assert str(error) == STREAM_CLOSED_EARLY
    assert error.retryable


async def test_response_failed_with_context_length_is_not_retried() -> None:
    client = mock_client(lambda request: sse_response(recorded("responses_failed_context.sse")))
    error = await failure(client, prompt())
    assert type(error) is ContextWindowExceeded
    assert str(error) == CONTEXT_WINDOW_EXCEEDED_MESSAGE
    assert not error.retryable


async def test_request_body_headers_and_query() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return sse_response(recorded("responses_text.sse"))

    history = (
        developer_message("<permissions>"),
        user_message("fix it"),
        Reasoning(id="rs_1", summary=[], encrypted_content="enc"),
        Reasoning(id="rs_2", summary=[{"type": "summary_text", "text": "no blob"}]),
        FunctionCall(id="fc_1", name="shell", arguments="{}", call_id="c1"),
        FunctionCallOutput(call_id="c1", output="ok"),
        UnknownItem.model_validate({"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
        Message(
            id="msg_1",
            role="assistant",
            content=[OutputText(text="done")],
        ),
    )
    client = mock_client(handler, http_headers={"X-Team": "red"}, query_params={"api-version": "7"})
    request = Prompt(
        model="gpt-5.1-codex",
        instructions="base",
        input=history,
        tools=(SHELL_TOOL, PATCH_TOOL),
        reasoning_effort="high",
    )
    await collect(client, request)
    (sent,) = seen
    assert sent.url.path == "/v1/responses"
    assert sent.url.params["api-version"] == "7"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["x-team"] == "red"
    assert json.loads(sent.content) == {
        "model": "gpt-5.1-codex",
        "instructions": "base",
        "input": [
            {"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": "<permissions>"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "fix it"}]},
            {"type": "reasoning", "summary": [], "encrypted_content": "enc"},
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "done"}]},
        ],
        "tools": [SHELL_TOOL, PATCH_TOOL],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "store": False,
        "stream": True,
        "reasoning": {"effort": "high", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }  # fmt: skip


def test_reasoning_parameters_only_for_reasoning_models() -> None:
    client = OpenAIResponsesClient.from_options(options())
    assert [
        name
        for name in ["gpt-5.1-codex", "o3", "o4-mini", "openai/gpt-oss-20b", "gpt-4.1", "llama3"]
        if supports_reasoning(name)
    ] == ["gpt-5.1-codex", "o3", "o4-mini", "openai/gpt-oss-20b"]
    plain = client.request_body(prompt("gpt-4.1", reasoning_effort="high"))
    assert "reasoning" not in plain
    assert "include" not in plain
    no_summary = client.request_body(prompt("o3", reasoning_summary="none"))
    assert no_summary["reasoning"] == {}


def test_request_input_keeps_custom_tool_items_and_passthrough_types() -> None:
    items = (
        CustomToolCall(id="ctc", status="completed", call_id="p", name="apply_patch", input="x"),
        CustomToolCallOutput(call_id="p", output="Done!"),
        UnknownItem.model_validate(
            {"type": "local_shell_call", "id": "lsc", "call_id": "l", "status": "completed"}
        ),
        UnknownItem.model_validate({"type": "future_thing", "x": 1}),
    )
    assert request_input(items) == [
        {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": "p",
            "name": "apply_patch",
            "input": "x",
        },
        {"type": "custom_tool_call_output", "call_id": "p", "output": "Done!"},
        {"type": "local_shell_call", "call_id": "l", "status": "completed"},
    ]


async def test_provider_without_key_sends_no_authorization_header() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return sse_response(recorded("responses_text.sse"))

    client = mock_client(handler, api_key=None, env_key=None, provider_name="local")
    await collect(client, prompt())
    assert "authorization" not in seen[0].headers


async def test_missing_usage_is_estimated_offline() -> None:
    body = b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
        for e in responses_events(
            [{"type": "message", "id": "m", "role": "assistant",
              "content": [{"type": "output_text", "text": "counted offline"}]}]
        )
    )  # fmt: skip
    client = mock_client(lambda request: sse_response(body))
    request = prompt()
    events = await collect(client, request)
    expected = estimate_usage(request, [assistant_message("counted offline")])
    assert events[-1] == Completed("resp_1", expected)
    assert expected.output_tokens > 0


# --- HTTP failures ------------------------------------------------------------------------------


def status(code: int, error: dict[str, Any], headers: dict[str, str] | None = None) -> Handler:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(code, json={"error": error}, headers=headers or {})

    return handler


async def test_429_with_retry_after_is_retryable_with_the_server_delay() -> None:
    handler = status(
        429,
        {"message": "Rate limit reached for gpt-5.1-codex.", "type": "requests",
         "code": "rate_limit_exceeded"},
        {"retry-after": "7"},
    )  # fmt: skip
    error = await failure(mock_client(handler, request_max_retries=0), prompt())
    assert type(error) is RateLimited
    assert (error.retryable, error.status, error.retry_after_s) == (True, 429, 7.0)
    assert "Rate limit reached" in str(error)


async def test_429_insufficient_quota_is_not_retried() -> None:
    handler = status(
        429,
        {"message": "You exceeded your current quota, please check your plan and billing.",
         "type": "insufficient_quota", "code": "insufficient_quota"},
    )  # fmt: skip
    error = await failure(mock_client(handler, request_max_retries=0), prompt())
    assert type(error) is QuotaExceeded
    assert not error.retryable


async def test_sdk_request_retries_honour_retry_after() -> None:
    calls: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx2.Response(
                429, json={"error": {"message": "slow down"}}, headers={"retry-after-ms": "20"}
            )
        return sse_response(recorded("responses_text.sse"))

    events = await collect(mock_client(handler, request_max_retries=1), prompt())
    assert (len(calls), type(events[-1])) == (2, Completed)


async def test_500_is_a_retryable_server_error_naming_the_provider() -> None:
    handler = status(500, {"message": "The server had an error while processing your request."})
    error = await failure(mock_client(handler, request_max_retries=0), prompt())
    assert type(error) is ServerError
    assert error.retryable
    assert str(error) == (
        "model provider 'openai' (http://mock.test/v1): server error (HTTP 500): "
        "The server had an error while processing your request."
    )


async def test_400_context_length_exceeded_is_not_retried_and_says_so() -> None:
    handler = status(
        400,
        {"message": "This model's maximum context length is 272000 tokens. However, your "
         "messages resulted in 300512 tokens.", "type": "invalid_request_error",
         "param": "input", "code": "context_length_exceeded"},
    )  # fmt: skip
    error = await failure(mock_client(handler, request_max_retries=0), prompt())
    assert type(error) is ContextWindowExceeded
    assert not error.retryable
    assert str(error) == CONTEXT_WINDOW_EXCEEDED_MESSAGE


async def test_invalid_api_key_has_a_clear_message() -> None:
    handler = status(
        401,
        {"message": "Incorrect API key provided: sk-test. You can find your API key at "
         "https://platform.openai.com/account/api-keys.", "type": "invalid_request_error",
         "code": "invalid_api_key"},
    )  # fmt: skip
    error = await failure(mock_client(handler), prompt())
    assert type(error) is AuthenticationError
    assert not error.retryable
    assert str(error) == (
        "model provider 'openai' (http://mock.test/v1): invalid API key or missing permissions "
        "(HTTP 401): Incorrect API key provided: sk-test. You can find your API key at "
        "https://platform.openai.com/account/api-keys.. Check the API key configured for this "
        "provider. (the key is read from OPENAI_API_KEY)"
    )


async def test_other_400_is_an_invalid_request() -> None:
    handler = status(400, {"message": "Unknown parameter: 'foo'.", "code": "unknown_parameter"})
    error = await failure(mock_client(handler), prompt())
    assert type(error) is InvalidRequest
    assert "Unknown parameter: 'foo'." in str(error)


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"type": "error", "code": "rate_limit_exceeded",
          "message": "Rate limit reached. Please try again in 1.5s."}, RateLimited),
        ({"type": "error", "code": "server_is_overloaded", "message": "busy"}, ServerError),
        ({"type": "response.incomplete", "response": {"id": "r", "status": "incomplete",
          "incomplete_details": {"reason": "max_output_tokens"}}}, StreamError),
        ({"type": "response.failed", "response": {"id": "r", "status": "failed", "error": {
          "code": "insufficient_quota", "message": "quota"}}}, QuotaExceeded),
    ],
)  # fmt: skip
async def test_stream_failures_are_classified(
    event: dict[str, Any], expected: type[ProviderError]
) -> None:
    body = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
    error = await failure(mock_client(lambda request: sse_response(body)), prompt())
    assert type(error) is expected
    assert str(error).startswith("model provider 'openai' (http://mock.test/v1): ")


async def test_malformed_event_data_is_a_retryable_stream_error() -> None:
    body = b"event: response.created\ndata: {not json\n\n"
    error = await failure(mock_client(lambda request: sse_response(body)), prompt())
    assert type(error) is StreamError
    assert error.retryable


# --- the local HTTP server ----------------------------------------------------------------------


def server_client(url: str, **kwargs: Any) -> OpenAIResponsesClient:
    return OpenAIResponsesClient.from_options(options(base_url=url, **kwargs))


def items(*output: dict[str, Any]) -> list[dict[str, Any]]:
    return list(output)


TEXT = {"type": "message", "id": "msg_a", "role": "assistant",
        "content": [{"type": "output_text", "text": "All done: three calls ran."}]}  # fmt: skip
REASONING = {"type": "reasoning", "id": "rs_a", "encrypted_content": "blob",
             "summary": [{"type": "summary_text", "text": "Plan: run the calls."}]}  # fmt: skip


def call(n: int) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "shell",
            "arguments": json.dumps({"command": ["echo", str(n)]})}  # fmt: skip


PATCH = {"type": "custom_tool_call", "id": "ctc_a", "call_id": "call_p", "name": "apply_patch",
         "input": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch"}  # fmt: skip


async def test_local_server_streams_reasoning_parallel_calls_custom_call_and_text() -> None:
    output = items(REASONING, call(1), call(2), call(3), PATCH, TEXT)
    with serve([sse_reply(responses_events(output, usage=usage(50, 20, reasoning=5)))]) as fake:
        events = await collect(server_client(fake.url), prompt(tools=(SHELL_TOOL, PATCH_TOOL)))
    done = [e.item for e in events if isinstance(e, OutputItemDone)]
    expected = [parse_response_item({**item, "status": "completed"}) for item in output]
    expected[0] = parse_response_item(REASONING)
    expected[-1] = parse_response_item(TEXT)
    for n in (1, 2, 3):  # function calls are recorded without a status (Codex's shape)
        expected[n] = parse_response_item(call(n))
    assert done == expected
    assert "".join(e.delta for e in events if isinstance(e, OutputTextDelta)) == (
        "All done: three calls ran."
    )
    assert "".join(e.delta for e in events if isinstance(e, ToolCallInputDelta)) == PATCH["input"]
    assert {e.call_id for e in events if isinstance(e, ToolCallInputDelta)} == {"call_p"}
    assert events[-1] == Completed(
        "resp_1",
        TokenUsage(input_tokens=50, output_tokens=20, reasoning_output_tokens=5, total_tokens=70),
    )
    (sent,) = fake.requests
    assert (sent.path, sent.headers["authorization"]) == ("/v1/responses", "Bearer sk-test")


@pytest.mark.parametrize("cut", ["eof", "reset"])
async def test_local_server_cut_mid_stream_is_retryable(cut: str) -> None:
    events = responses_events(items(call(1), TEXT), complete=False)
    with serve([sse_reply(events, cut=cut)]) as fake:  # type: ignore[arg-type]
        error = await failure(server_client(fake.url), prompt())
    assert error.retryable
    assert type(error) is (StreamError if cut == "eof" else ConnectionFailed)


async def test_local_server_idle_stream_times_out() -> None:
    stalled = responses_events(items(TEXT), complete=False)[:3]
    with serve([sse_reply(stalled, stall_s=2.0)]) as fake:
        error = await failure(server_client(fake.url, stream_idle_timeout_ms=200), prompt())
    assert type(error) is Timeout
    assert error.retryable
    assert "no data from the response stream for 0.2s" in str(error)


async def test_local_server_that_never_answers_times_out() -> None:
    with serve([Reply(delay_s=1.0)]) as fake:
        client = server_client(fake.url, stream_idle_timeout_ms=200, request_max_retries=0)
        error = await failure(client, prompt())
    assert type(error) is Timeout
    assert str(error) == f"model provider 'openai' ({fake.url}): the request timed out"


async def test_local_server_errors_are_classified() -> None:
    replies: Sequence[Reply] = [
        error_reply(429, {"message": "Too many requests"}, {"retry-after": "3"}),
        error_reply(500, {"message": "boom"}),
        error_reply(400, {"message": "maximum context length is 8192 tokens",
                          "code": "context_length_exceeded"}),
        error_reply(401, {"message": "Incorrect API key provided", "code": "invalid_api_key"}),
    ]  # fmt: skip
    with serve(replies) as fake:
        errors = [
            await failure(server_client(fake.url, request_max_retries=0), prompt()) for _ in replies
        ]
    assert [(type(e), e.retryable, e.retry_after_s) for e in errors] == [
        (RateLimited, True, 3.0),
        (ServerError, True, None),
        (ContextWindowExceeded, False, None),
        (AuthenticationError, False, None),
    ]


async def test_connection_refused_is_a_retryable_connection_failure() -> None:
    with serve() as fake:
        url = fake.url
    error = await failure(server_client(url, request_max_retries=0), prompt())
    assert type(error) is ConnectionFailed
    assert error.retryable
    assert str(error).startswith(f"model provider 'openai' ({url}): connection failed")
