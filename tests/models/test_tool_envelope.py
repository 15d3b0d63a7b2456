"""The JSON tool envelope (pure) and the Chat Completions client in envelope mode (fake server)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_openai_server import Reply, chat_chunks, chat_usage, serve
from hypothesis import given
from hypothesis import strategies as st

from mini_codex.config import ModelProviderConfig
from mini_codex.models import (
    Completed,
    Created,
    ModelClientOptions,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    Prompt,
    TokenUsage,
)
from mini_codex.models.chat_completions import ChatCompletionsClient, chat_messages, chat_tools
from mini_codex.models.tool_envelope import (
    OUTPUT_FOLLOW_UP,
    MessageStreamer,
    envelope_history,
    envelope_instructions,
    envelope_response_format,
    envelope_schema,
    parse_envelope,
)
from mini_codex.protocol.items import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    Message,
    assistant_message,
    developer_message,
    user_message,
)

SHELL = {
    "type": "function",
    "name": "shell",
    "description": "Run a command.",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
        "additionalProperties": False,
    },
}
PATCH = {"type": "custom", "name": "apply_patch", "description": "Apply a patch."}
FUNCTIONS, CUSTOM = chat_tools([SHELL, PATCH])


def test_schema_has_a_message_variant_and_one_variant_per_tool() -> None:
    assert envelope_schema(FUNCTIONS) == {
        "anyOf": [
            {"type": "object", "properties": {"message": {"type": "string"}},
             "required": ["message"], "additionalProperties": False},
            {"type": "object",
             "properties": {"tool": {"type": "string", "enum": ["shell"]},
                            "arguments": SHELL["parameters"]},
             "required": ["tool", "arguments"], "additionalProperties": False},
            {"type": "object",
             "properties": {"tool": {"type": "string", "enum": ["apply_patch"]},
                            "arguments": FUNCTIONS[1]["function"]["parameters"]},
             "required": ["tool", "arguments"], "additionalProperties": False},
        ]
    }  # fmt: skip
    assert envelope_response_format(FUNCTIONS) == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "strict": True, "schema": envelope_schema(FUNCTIONS)},
    }


def test_instructions_list_every_tool_with_its_schema() -> None:
    text = envelope_instructions(FUNCTIONS)
    assert text.startswith("# How to reply")
    assert (
        "## shell\n\nRun a command.\n\nArguments (JSON schema): " + json.dumps(SHELL["parameters"])
        in text
    )
    assert "## apply_patch\n\nApply a patch." in text
    assert "$tools" not in text


def test_history_becomes_envelopes_and_outputs_name_their_tool() -> None:
    history = [
        developer_message("<permissions/>"),
        user_message("go"),
        FunctionCall(name="shell", arguments='{"command": "ls"}', call_id="a"),
        FunctionCallOutput(call_id="a", output="a.txt"),
        CustomToolCall(name="apply_patch", input="*** Begin Patch", call_id="b"),
        CustomToolCallOutput(call_id="b", output=[{"type": "input_text", "text": "Done!"}]),
        FunctionCallOutput(call_id="orphan", output="dropped"),
        assistant_message("All done."),
    ]
    assert envelope_history(history) == [
        developer_message("<permissions/>"),
        user_message("go"),
        assistant_message('{"tool": "shell", "arguments": {"command": "ls"}}'),
        user_message(f"Output of the shell tool call:\na.txt\n\n{OUTPUT_FOLLOW_UP}"),
        assistant_message('{"tool": "apply_patch", "arguments": {"input": "*** Begin Patch"}}'),
        user_message(f"Output of the apply_patch tool call:\nDone!\n\n{OUTPUT_FOLLOW_UP}"),
        assistant_message('{"message": "All done."}'),
    ]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"message": "hi"}', assistant_message("hi")),
        ('{"tool": "shell", "arguments": {"command": "ls"}}',
         FunctionCall(name="shell", arguments='{"command": "ls"}', call_id="c")),
        ('{"tool": "apply_patch", "arguments": {"input": "*** Begin Patch"}}',
         CustomToolCall(name="apply_patch", input="*** Begin Patch", call_id="c")),
        ('{"message": "cut off', assistant_message('{"message": "cut off')),
        ("[1, 2]", assistant_message("[1, 2]")),
        ('{"message": "x", "extra": 1}', assistant_message('{"message": "x", "extra": 1}')),
        ('{"tool": "shell", "arguments": "ls"}',
         assistant_message('{"tool": "shell", "arguments": "ls"}')),
    ],
)  # fmt: skip
def test_replies_parse_to_items_and_nothing_is_lost(reply: str, expected: Any) -> None:
    assert parse_envelope(reply, call_id="c", custom_tools=CUSTOM) == expected


@given(st.text(), st.lists(st.integers(min_value=1, max_value=8), max_size=40), st.booleans())
def test_streamed_message_decodes_to_the_message_for_any_split(
    message: str, cuts: list[int], ascii_only: bool
) -> None:
    reply = json.dumps({"message": message}, ensure_ascii=ascii_only, indent=2)
    streamer = MessageStreamer()
    decoded: list[str] = []
    position = 0
    for size in [*cuts, len(reply)]:
        decoded.append(streamer.feed(reply[position : position + size]))
        position += size
    assert "".join(decoded) == message


@pytest.mark.anyio
async def test_a_message_cut_by_the_token_limit_keeps_the_text_shown() -> None:
    body = chat_chunks(text='{"message": "Three files: a, b', usage=chat_usage(5, 9))
    with serve([sse(body)]) as fake:
        client = ChatCompletionsClient.from_options(options(fake.url))
        request = Prompt(model="tiny", instructions="", input=(user_message("x"),), tools=(SHELL,))
        try:
            events = [event async for event in client.stream(request)]
        finally:
            await client.aclose()
    shown = "".join(event.delta for event in events if isinstance(event, OutputTextDelta))
    assert shown == "Three files: a, b"
    assert [e for e in events if isinstance(e, OutputItemDone)] == [
        OutputItemDone(assistant_message("Three files: a, b"))
    ]


def test_a_tool_reply_streams_no_text() -> None:
    streamer = MessageStreamer()
    assert [streamer.feed(piece) for piece in ['{"tool": "sh', 'ell", "arguments": {}}']] == [
        "",
        "",
    ]


# --- the client in envelope mode, against the scripted server ------------------------------------


def options(url: str) -> ModelClientOptions:
    provider = ModelProviderConfig(base_url=url, wire_api="chat", tool_calling="envelope")
    return ModelClientOptions(model="tiny", provider_name="local", provider=provider)


def sse(chunks: list[bytes]) -> Reply:
    return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)


@pytest.mark.anyio
async def test_envelope_request_and_a_tool_call_reply() -> None:
    reply = '{"tool": "shell", "arguments": {"command": "ls"}}'
    with serve([sse(chat_chunks(text=reply, usage=chat_usage(50, 12)))]) as fake:
        client = ChatCompletionsClient.from_options(options(fake.url))
        request = Prompt(
            model="tiny", instructions="base", input=(user_message("list"),), tools=(SHELL, PATCH)
        )
        try:
            events = [event async for event in client.stream(request)]
        finally:
            await client.aclose()
        sent = fake.requests[0].body
    assert events == [
        Created("chatcmpl-1"),
        OutputItemDone(
            FunctionCall(name="shell", arguments='{"command": "ls"}', call_id="call_chatcmpl-1_0")
        ),
        Completed("chatcmpl-1", TokenUsage(input_tokens=50, output_tokens=12, total_tokens=62)),
    ]
    assert sent == {
        "model": "tiny",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": chat_messages(
            "base\n\n" + envelope_instructions(FUNCTIONS), [user_message("list")]
        ),
        "response_format": envelope_response_format(FUNCTIONS),
    }


@pytest.mark.anyio
async def test_envelope_message_reply_streams_its_text() -> None:
    reply = json.dumps({"message": 'Two files: "a" and b.'})
    with serve([sse(chat_chunks(text=reply, usage=chat_usage(5, 5)))]) as fake:
        client = ChatCompletionsClient.from_options(options(fake.url))
        request = Prompt(model="tiny", instructions="", input=(user_message("x"),), tools=(SHELL,))
        try:
            events = [event async for event in client.stream(request)]
        finally:
            await client.aclose()
    deltas = [event.delta for event in events if isinstance(event, OutputTextDelta)]
    assert "".join(deltas) == 'Two files: "a" and b.'
    assert events == [
        Created("chatcmpl-1"),
        OutputItemAdded(Message(role="assistant", content=[])),
        *[OutputTextDelta(None, delta) for delta in deltas],
        OutputItemDone(assistant_message('Two files: "a" and b.')),
        Completed("chatcmpl-1", TokenUsage(input_tokens=5, output_tokens=5, total_tokens=10)),
    ]
