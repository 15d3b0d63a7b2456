"""Runtime-level: a real ``Session`` driving the real providers against the local server, whose
first response is cut mid-stream. The sampling loop retries; history, the retry prompt and the
rollout hold every item exactly once."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import (
    FakeOpenAIServer,
    Reply,
    chat_chunks,
    chat_usage,
    error_reply,
    responses_events,
    serve,
    sse_reply,
    usage,
)

from mini_codex.config import Config, ModelProviderConfig
from mini_codex.host import Session, SessionOptions, open_options
from mini_codex.models import ModelClient, ModelClientOptions
from mini_codex.models.chat_completions import ChatCompletionsClient
from mini_codex.models.errors import CONTEXT_WINDOW_EXCEEDED_MESSAGE
from mini_codex.models.openai_responses import OpenAIResponsesClient
from mini_codex.protocol import ResponseItemLine, TaskComplete, TokenCount
from mini_codex.protocol.items import (
    FunctionCall,
    FunctionCallOutput,
    Message,
    Reasoning,
    ResponseItem,
    message_text,
)
from mini_codex.protocol.session_events import ErrorEvent, SessionEvent, StreamErrorEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

pytestmark = pytest.mark.anyio


class EchoTool:
    """Answers ``echo: <text>`` and counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="echo",
            description="Echo text.",
            kind="function",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        )

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        text = json.loads(payload)["text"]
        self.calls.append(ctx.call_id)
        return ToolOutput(text=f"echo: {text}", success=True)


async def run_session(
    tmp_path: Path, client: ModelClient, config: Config, tool: EchoTool
) -> tuple[Session, list[SessionEvent]]:
    (tmp_path / "work").mkdir()
    events: list[SessionEvent] = []
    options = SessionOptions(
        cwd=tmp_path / "work",
        home=tmp_path / "home",
        client=client,
        config=config,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        on_event=events.append,
        tools=[RegisteredTool(tool)],
    )
    try:
        async with open_options(options) as session:
            await session.run_turn("echo hello, then say done")
    finally:
        await client.aclose()
    return session, events


def item_keys(items: list[ResponseItem] | list[dict[str, Any]]) -> list[str]:
    """One key per item, so a duplicate shows up twice."""
    keys = []
    for item in items:
        data = item if isinstance(item, dict) else item.to_json()
        keys.append(
            f"{data['type']}:{data.get('call_id') or data.get('role')}:"
            f"{json.dumps(data.get('content') or data.get('summary') or '')[:40]}"
        )
    return keys


def assert_no_duplicates(keys: list[str]) -> None:
    assert [key for key, count in Counter(keys).items() if count > 1] == []


def check_session(
    session: Session, events: list[SessionEvent], fake: FakeOpenAIServer, tool: EchoTool
) -> list[ResponseItem]:
    assert [e for e in events if isinstance(e, ErrorEvent)] == []
    retries = [e for e in events if isinstance(e, StreamErrorEvent)]
    assert [(e.attempt, e.max_retries) for e in retries] == [(1, 5)]
    history = list(session.history.items)
    assert_no_duplicates(item_keys(history))
    calls = [item for item in history if isinstance(item, FunctionCall)]
    outputs = [item for item in history if isinstance(item, FunctionCallOutput)]
    assert [(c.call_id, o.call_id, o.output) for c, o in zip(calls, outputs, strict=True)] == [
        ("call_echo", "call_echo", "echo: hello")
    ]
    assert tool.calls == ["call_echo"]  # the tool ran once, in the failed attempt
    final = history[-1]
    assert isinstance(final, Message)
    assert (final.role, message_text(final)) == ("assistant", "done")
    assert session.rollout_path is not None
    recorded = [
        line.payload
        for line in read_rollout(session.rollout_path).lines
        if isinstance(line, ResponseItemLine)
    ]
    assert recorded == history
    assert len(fake.requests) == 2
    return history


async def test_responses_stream_cut_once_is_retried_without_duplicates(tmp_path: Path) -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "encrypted_content": "enc-1",
                 "summary": [{"type": "summary_text", "text": "Echo first."}]}  # fmt: skip
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_echo", "name": "echo",
            "arguments": '{"text": "hello"}'}  # fmt: skip
    partial = {"type": "message", "id": "msg_partial", "role": "assistant",
               "content": [{"type": "output_text", "text": "I will now"}]}  # fmt: skip
    cut = responses_events([reasoning, call, partial], complete=False)[:-3]  # message not done
    final = {"type": "message", "id": "msg_done", "role": "assistant",
             "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
    replies: list[Reply] = [
        sse_reply(cut, cut="eof"),
        sse_reply(responses_events([final], response_id="resp_2", usage=usage(120, 3))),
    ]
    tool = EchoTool()
    with serve(replies) as fake:
        client = OpenAIResponsesClient.from_options(
            ModelClientOptions(
                model="gpt-5.1-codex",
                provider=ModelProviderConfig(base_url=fake.url),
                api_key="sk-test",
            )
        )
        config = Config(model="gpt-5.1-codex")
        session, events = await run_session(tmp_path, client, config, tool)
    history = check_session(session, events, fake, tool)
    assert Reasoning(id="rs_1", summary=reasoning["summary"], encrypted_content="enc-1") in history
    assert "I will now" not in json.dumps([item.to_json() for item in history])
    retry_input = fake.requests[1].body["input"]
    assert_no_duplicates(item_keys(retry_input))
    assert [item["type"] for item in retry_input[-3:]] == [
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    (info,) = [e.info for e in events if isinstance(e, TokenCount)]
    assert info is not None
    last = {"input_tokens": 120, "cached_input_tokens": 0, "output_tokens": 3,
            "reasoning_output_tokens": 0, "total_tokens": 123}  # fmt: skip
    assert info == {
        "total_token_usage": last,
        "turn_token_usage": last,
        "last_token_usage": last,
        "model_context_window": 272_000,
        "auto_compact_token_limit": 244_800,
        "auto_compact_due": False,
        "context_tokens": 123,
    }


async def test_chat_stream_cut_once_is_retried_without_duplicates(tmp_path: Path) -> None:
    def stream(chunks: list[bytes], **kwargs: Any) -> Reply:
        return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks, **kwargs)

    echo = [("call_echo", "echo", '{"text": "hello"}')]
    # Chat items complete only at the end of a stream, so the cut attempt records nothing and
    # the tool runs when the retry returns the call.
    replies = [
        stream(chat_chunks(tool_calls=echo, cut=True), cut="eof"),
        stream(chat_chunks(tool_calls=echo)),
        stream(chat_chunks(text="done", usage=chat_usage(40, 1))),
    ]
    tool = EchoTool()
    with serve(replies) as fake:
        provider = ModelProviderConfig(base_url=fake.url, wire_api="chat")
        client = ChatCompletionsClient.from_options(
            ModelClientOptions(model="local-model", provider_name="local", provider=provider)
        )
        # A window the session never fills (a full one compacts mid-turn: tests/runtime/
        # test_compaction.py and test_compaction_http.py).
        config = Config(model="local-model", model_context_window=100_000)
        session, events = await run_session(tmp_path, client, config, tool)
        assert len(fake.requests) == 3
        fake.requests.pop(0)  # the cut attempt
    check_session(session, events, fake, tool)
    last = fake.requests[-1].body["messages"]
    assert [m["role"] for m in last[-3:]] == ["user", "assistant", "tool"]
    assert last[-2]["tool_calls"][0]["id"] == "call_echo"
    infos = [e.info for e in events if isinstance(e, TokenCount) and e.info is not None]
    # The tool-call response reported no usage (estimated offline); the last one did.
    assert [info["last_token_usage"]["total_tokens"] for info in infos][-1] == 41
    assert [(i["model_context_window"], i["auto_compact_token_limit"]) for i in infos] == [
        (100_000, 90_000),
        (100_000, 90_000),
    ]
    assert [i["auto_compact_due"] for i in infos] == [False, False]
    assert infos[-1]["context_tokens"] == 41
    assert infos[0]["last_token_usage"]["input_tokens"] > 0


def local_config(url: str) -> tuple[Config, ModelProviderConfig]:
    provider = ModelProviderConfig(base_url=url, request_max_retries=0)
    config = Config(
        model="gpt-5.1-codex", model_provider="local", model_providers={"local": provider}
    )
    return config, provider


def responses_client(provider: ModelProviderConfig) -> OpenAIResponsesClient:
    return OpenAIResponsesClient.from_options(
        ModelClientOptions(model="gpt-5.1-codex", provider_name="local", provider=provider)
    )


async def test_session_waits_the_retry_after_of_a_429(tmp_path: Path) -> None:
    done = {"type": "message", "id": "m", "role": "assistant",
            "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
    replies = [
        error_reply(429, {"message": "Rate limit reached"}, {"retry-after": "0.25"}),
        sse_reply(responses_events([done], usage=usage(10, 1))),
    ]
    with serve(replies) as fake:
        config, provider = local_config(fake.url)
        session, events = await run_session(
            tmp_path, responses_client(provider), config, EchoTool()
        )
    assert [(e.attempt, e.delay_s) for e in events if isinstance(e, StreamErrorEvent)] == [
        (1, 0.25)
    ]
    assert [e for e in events if isinstance(e, ErrorEvent)] == []
    assert session.history.items[-1] == Message(id="m", role="assistant", content=done["content"])
    assert len(fake.requests) == 2


async def test_session_ends_the_turn_on_context_window_exceeded_without_retry(
    tmp_path: Path,
) -> None:
    error = {"message": "This model's maximum context length is 272000 tokens.",
             "code": "context_length_exceeded", "type": "invalid_request_error"}  # fmt: skip
    with serve([error_reply(400, error)]) as fake:
        config, provider = local_config(fake.url)
        _, events = await run_session(tmp_path, responses_client(provider), config, EchoTool())
    assert [e for e in events if isinstance(e, StreamErrorEvent)] == []
    assert [e.message for e in events if isinstance(e, ErrorEvent)] == [
        CONTEXT_WINDOW_EXCEEDED_MESSAGE
    ]
    assert [e.type for e in events if isinstance(e, TaskComplete)] == ["task_complete"]
    assert len(fake.requests) == 1
