"""The Chat Completions provider: history/tool mapping (pure), and the real ``openai`` client
against a recorded SSE body (``httpx2.MockTransport``) and the local scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fake_openai_server import Reply, chat_chunks, chat_usage, error_reply, serve

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
)
from mini_codex.models.chat_completions import (
    ChatCompletionsClient,
    ToolsNotSupported,
    chat_messages,
    chat_tools,
)
from mini_codex.models.errors import (
    CONTEXT_WINDOW_EXCEEDED_MESSAGE,
    STREAM_CLOSED_EARLY,
    AuthenticationError,
    ContextWindowExceeded,
    ProviderError,
    RateLimited,
    ServerError,
    StreamError,
)
from mini_codex.models.tokens import estimate_usage
from mini_codex.protocol.items import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    InputImage,
    InputText,
    Message,
    Reasoning,
    assistant_message,
    developer_message,
    user_message,
)

pytestmark = pytest.mark.anyio

SHELL_TOOL = {
    "type": "function",
    "name": "shell",
    "description": "Run a command.",
    "strict": False,
    "parameters": {"type": "object", "properties": {"command": {"type": "array"}}},
}
PATCH_TOOL = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Apply a patch.",
    "format": {"type": "grammar", "syntax": "lark", "definition": "start: patch"},
}


def options(url: str, **settings: Any) -> ModelClientOptions:
    provider = ModelProviderConfig(name="Local", base_url=url, wire_api="chat", **settings)
    return ModelClientOptions(model="qwen2.5-coder:7b", provider_name="local", provider=provider)


def prompt(*history: Any, tools: tuple[dict[str, Any], ...] = (SHELL_TOOL, PATCH_TOOL)) -> Prompt:
    return Prompt(
        model="qwen2.5-coder:7b",
        instructions="You are a coding agent.",
        input=history or (user_message("hi"),),
        tools=tools,
    )


async def collect(client: ChatCompletionsClient, request: Prompt) -> list[ModelEvent]:
    try:
        return [event async for event in client.stream(request)]
    finally:
        await client.aclose()


async def failure(client: ChatCompletionsClient, request: Prompt) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await collect(client, request)
    return caught.value


def done_items(events: list[ModelEvent]) -> list[Any]:
    return [event.item for event in events if isinstance(event, OutputItemDone)]


# --- mapping (pure) -----------------------------------------------------------------------------


def test_history_maps_to_chat_messages() -> None:
    history = [
        developer_message("<permissions>read-only</permissions>"),
        developer_message("<environment_context>cwd</environment_context>"),
        user_message("list and patch"),
        Reasoning(summary=[{"type": "summary_text", "text": "thinking"}], encrypted_content="x"),
        assistant_message("Running two calls."),
        FunctionCall(name="shell", arguments='{"command":["ls"]}', call_id="c1"),
        CustomToolCall(name="apply_patch", input="*** Begin Patch", call_id="c2"),
        FunctionCallOutput(call_id="c1", output="a.txt"),
        CustomToolCallOutput(call_id="c2", output=[{"type": "input_text", "text": "Done!"}]),
        FunctionCallOutput(call_id="gone", output="orphan from a dropped call"),
        developer_message("<world_state>changed</world_state>"),
        Message(
            role="user",
            content=[InputText(text="see"), InputImage(image_url="data:image/png;base64,AA")],
        ),
        assistant_message("Done."),
    ]
    assert chat_messages("base", history) == [
        {"role": "system", "content": (
            "base\n\n<permissions>read-only</permissions>\n\n"
            "<environment_context>cwd</environment_context>")},
        {"role": "user", "content": "list and patch"},
        {"role": "assistant", "content": "Running two calls.", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "shell", "arguments": '{"command":["ls"]}'}},
            {"id": "c2", "type": "function",
             "function": {"name": "apply_patch", "arguments": '{"input": "*** Begin Patch"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "tool", "tool_call_id": "c2", "content": "Done!"},
        {"role": "system", "content": "<world_state>changed</world_state>"},
        {"role": "user", "content": [
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
        ]},
        {"role": "assistant", "content": "Done."},
    ]  # fmt: skip


def test_tool_calls_without_text_get_their_own_assistant_message() -> None:
    history = [
        user_message("go"),
        FunctionCall(name="shell", arguments="{}", call_id="a"),
        FunctionCallOutput(call_id="a", output="1"),
        FunctionCall(name="shell", arguments="{}", call_id="b"),
        FunctionCallOutput(call_id="b", output="2"),
    ]
    call = {"type": "function", "function": {"name": "shell", "arguments": "{}"}}
    assert chat_messages("", history) == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "a", **call}]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "assistant", "tool_calls": [{"id": "b", **call}]},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
    ]


def test_tools_map_to_function_specs_and_custom_tools_take_one_string() -> None:
    specs, custom = chat_tools([SHELL_TOOL, PATCH_TOOL, {"type": "web_search"}])
    assert custom == frozenset({"apply_patch"})
    assert specs == [
        {"type": "function", "function": {
            "name": "shell", "description": "Run a command.",
            "parameters": SHELL_TOOL["parameters"]}},
        {"type": "function", "function": {
            "name": "apply_patch",
            "description": (
                "Apply a patch.\n\nCall this tool with a JSON object whose only field `input` is "
                "a string holding the raw tool input.\n"
                "The input must follow this lark grammar:\nstart: patch"),
            "parameters": {"type": "object", "properties": {"input": {"type": "string"}},
                           "required": ["input"], "additionalProperties": False}}},
    ]  # fmt: skip


# --- a recorded body through MockTransport ------------------------------------------------------


async def test_recorded_parallel_tool_calls_accumulate_by_index() -> None:
    body = Path(__file__).parent / "sse" / "chat_parallel_tool_calls.sse"
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body.read_bytes()
        )

    client = ChatCompletionsClient.from_options(
        options("http://mock.test/v1"),
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )
    events = await collect(client, prompt())
    assert events == [
        Created("chatcmpl-par"),
        OutputItemAdded(Message(role="assistant", content=[])),
        OutputTextDelta(None, "Reading both files."),
        OutputItemDone(assistant_message("Reading both files.")),
        OutputItemDone(
            FunctionCall(name="shell", arguments='{"command": ["cat", "a.txt"]}', call_id="call_a")
        ),
        OutputItemDone(
            FunctionCall(name="shell", arguments='{"command": ["cat", "b.txt"]}', call_id="call_b")
        ),
        Completed("chatcmpl-par", TokenUsage(input_tokens=812, output_tokens=61, total_tokens=873)),
    ]
    sent = json.loads(seen[0].content)
    assert (seen[0].url.path, "authorization" in seen[0].headers) == ("/v1/chat/completions", False)
    assert {k: v for k, v in sent.items() if k not in ("messages", "tools")} == {
        "model": "qwen2.5-coder:7b",
        "stream": True,
        "stream_options": {"include_usage": True},
        "parallel_tool_calls": True,
    }
    assert sent["messages"] == chat_messages("You are a coding agent.", [user_message("hi")])
    assert sent["tools"] == chat_tools([SHELL_TOOL, PATCH_TOOL])[0]


# --- the local HTTP server ----------------------------------------------------------------------


def sse(chunks: list[bytes], **kwargs: Any) -> Reply:
    return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks, **kwargs)


async def test_local_server_text_reasoning_and_usage() -> None:
    reply = sse(chat_chunks(text="Hello there, local model here.", reasoning="think",
                            usage=chat_usage(30, 8)))  # fmt: skip
    with serve([reply]) as fake:
        events = await collect(ChatCompletionsClient.from_options(options(fake.url)), prompt())
    assert [e for e in events if isinstance(e, ReasoningSummaryDelta)] == [
        ReasoningSummaryDelta(None, "think")
    ]
    assert "".join(e.delta for e in events if isinstance(e, OutputTextDelta)) == (
        "Hello there, local model here."
    )
    assert done_items(events) == [assistant_message("Hello there, local model here.")]
    assert events[-1] == Completed(
        "chatcmpl-1", TokenUsage(input_tokens=30, output_tokens=8, total_tokens=38)
    )


async def test_local_server_parallel_calls_and_custom_tool_call() -> None:
    calls = [
        ("call_1", "shell", '{"command": ["ls", "-la"]}'),
        ("call_2", "shell", '{"command": ["cat", "README.md"]}'),
        ("call_3", "apply_patch", json.dumps({"input": "*** Begin Patch\n*** End Patch"})),
    ]
    with serve([sse(chat_chunks(tool_calls=calls, usage=chat_usage(10, 10)))]) as fake:
        events = await collect(ChatCompletionsClient.from_options(options(fake.url)), prompt())
    assert done_items(events) == [
        FunctionCall(name="shell", arguments=calls[0][2], call_id="call_1"),
        FunctionCall(name="shell", arguments=calls[1][2], call_id="call_2"),
        CustomToolCall(
            name="apply_patch", input="*** Begin Patch\n*** End Patch", call_id="call_3"
        ),
    ]


async def test_server_numbering_every_call_zero_still_yields_separate_calls() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
        return f"data: {json.dumps(body)}\n\n".encode()

    def whole(call_id: str) -> bytes:
        function = {"name": "shell", "arguments": '{"command":["pwd"]}'}
        return chunk({"tool_calls": [{"index": 0, "id": call_id, "function": function}]})

    body = [whole("a"), whole("b"), chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    with serve([sse(body)]) as fake:
        events = await collect(ChatCompletionsClient.from_options(options(fake.url)), prompt())
    assert [item.call_id for item in done_items(events)] == ["a", "b"]


async def test_missing_usage_is_estimated_and_missing_ids_are_assigned() -> None:
    body = chat_chunks(tool_calls=[("", "shell", "{}")], completion_id="cmpl-9")
    with serve([sse(body)]) as fake:
        request = prompt()
        events = await collect(ChatCompletionsClient.from_options(options(fake.url)), request)
    expected_item = FunctionCall(name="shell", arguments="{}", call_id="call_cmpl-9_0")
    assert done_items(events) == [expected_item]
    assert events[-1] == Completed("cmpl-9", estimate_usage(request, [expected_item]))


@pytest.mark.parametrize("cut", [None, "eof", "reset"])
async def test_stream_cut_before_finish_is_retryable(cut: Any) -> None:
    body = chat_chunks(text="partial answer that never", cut=True)
    with serve([sse(body, cut=cut)]) as fake:
        error = await failure(ChatCompletionsClient.from_options(options(fake.url)), prompt())
    assert error.retryable
    if cut != "reset":
        assert (type(error), str(error)) == (StreamError, STREAM_CLOSED_EARLY)


async def test_local_server_http_errors() -> None:
    replies = [
        error_reply(429, {"message": "Too many requests"}, {"retry-after": "2"}),
        error_reply(500, {"message": "llama runner process has terminated"}),
        error_reply(400, {"message": "the request exceeds the available context size, try "
                          "increasing it", "type": "exceed_context_size_error"}),
        error_reply(401, {"message": "Invalid API Key", "type": "authentication_error"}),
    ]  # fmt: skip
    with serve(replies) as fake:
        errors = [
            await failure(
                ChatCompletionsClient.from_options(options(fake.url, request_max_retries=0)),
                prompt(),
            )
            for _ in replies
        ]
    assert [(type(e), e.retryable, e.retry_after_s) for e in errors] == [
        (RateLimited, True, 2.0),
        (ServerError, True, None),
        (ContextWindowExceeded, False, None),
        (AuthenticationError, False, None),
    ]
    assert str(errors[2]) == CONTEXT_WINDOW_EXCEEDED_MESSAGE
    assert str(errors[3]).startswith(
        f"model provider 'local' ({fake.url}): invalid API key or missing permissions (HTTP 401)"
    )


@pytest.mark.parametrize(
    "message",
    [
        "registry.ollama.ai/library/gemma2:2b does not support tools",
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        "tools param requires --jinja flag",
    ],
)
async def test_server_without_tool_support_gets_a_clear_error(message: str) -> None:
    with serve([error_reply(400, {"message": message, "type": "invalid_request_error"})]) as fake:
        error = await failure(ChatCompletionsClient.from_options(options(fake.url)), prompt())
    assert type(error) is ToolsNotSupported
    assert not error.retryable
    assert str(error).startswith(
        f"model provider 'local' ({fake.url}) does not accept tool definitions for model "
        "'qwen2.5-coder:7b', and mini-codex needs tool calling."
    )
    assert message in str(error)


async def test_a_400_about_something_else_is_not_blamed_on_tools() -> None:
    with serve([error_reply(400, {"message": "model 'nope' not found"})]) as fake:
        error = await failure(ChatCompletionsClient.from_options(options(fake.url)), prompt())
    assert type(error) is not ToolsNotSupported
    assert "model 'nope' not found" in str(error)


async def test_error_inside_the_stream_is_classified() -> None:
    body = [b'data: {"error": {"message": "upstream overloaded", "code": "server_error"}}\n\n']
    with serve([sse(body)]) as fake:
        error = await failure(ChatCompletionsClient.from_options(options(fake.url)), prompt())
    assert (type(error), error.retryable) == (ServerError, True)
    assert "upstream overloaded" in str(error)
