"""The Chat Completions provider against a real embedded llama.cpp server (bundled SmolLM2-135M).

The same client as ``test_chat_completions.py`` (which scripts a fake server), here with a real
model: streaming text, a tool call through the JSON-schema envelope, a final message (stop), a
context-length error from a small ``n_ctx``, and the server killed mid-stream (a retryable error;
the retry, after the server is back on the same port, succeeds). One server for the module, one
thread, temperature 0 and a fixed seed, so the toy model answers the same way every run.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mini_codex.config import Config, ModelProviderConfig
from mini_codex.models import (
    Completed,
    ContextWindowExceeded,
    Created,
    ModelClientOptions,
    ModelEvent,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    Prompt,
    ProviderError,
    RetryPolicy,
    TokenUsage,
)
from mini_codex.models.chat_completions import ChatCompletionsClient
from mini_codex.models.local import (
    BUNDLED_NAME,
    EmbeddedLlamaServer,
    LlamaCppSettings,
    bundled_model_path,
    probe_llamacpp,
)
from mini_codex.protocol import ResponseItemLine
from mini_codex.protocol.items import (
    FunctionCall,
    FunctionCallOutput,
    Message,
    assistant_message,
    user_message,
)

pytestmark = pytest.mark.anyio

N_CTX = 1024
INSTRUCTIONS = "You are a coding agent: you do tasks by calling tools."
SHELL_TOOL = {
    "type": "function",
    "name": "shell",
    "description": "Runs a shell command and returns its output.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command to run."}},
        "required": ["command"],
        "additionalProperties": False,
    },
}


def settings(**changes: Any) -> LlamaCppSettings:
    values: dict[str, Any] = {"model_path": bundled_model_path(), "n_ctx": N_CTX, "max_tokens": 64}
    return LlamaCppSettings(**{**values, **changes})


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedLlamaServer]:
    with EmbeddedLlamaServer(settings()) as running:
        yield running


def client_for(base_url: str, tool_calling: str = "envelope") -> ChatCompletionsClient:
    provider = ModelProviderConfig(
        name="llama.cpp", base_url=base_url + "/v1", wire_api="chat", tool_calling=tool_calling
    )
    options = ModelClientOptions(model=BUNDLED_NAME, provider_name="llamacpp", provider=provider)
    return ChatCompletionsClient.from_options(options)


def prompt(text: str, *, tools: tuple[dict[str, Any], ...] = ()) -> Prompt:
    return Prompt(
        model=BUNDLED_NAME,
        instructions=INSTRUCTIONS,
        input=(user_message(text),),
        tools=tools,
    )


async def collect(client: ChatCompletionsClient, request: Prompt) -> list[ModelEvent]:
    try:
        return [event async for event in client.stream(request)]
    finally:
        await client.aclose()


def server_usage(events: list[ModelEvent]) -> TokenUsage:
    last = events[-1]
    assert isinstance(last, Completed)
    assert last.usage is not None
    return last.usage


def test_the_server_reports_its_context_window_and_no_native_tools(
    server: EmbeddedLlamaServer,
) -> None:
    assert server.base_url is not None
    assert probe_llamacpp(server.base_url, BUNDLED_NAME).__dict__ == {
        "name": BUNDLED_NAME,
        "context_window": N_CTX,
        "native_tools": False,
    }


async def test_streaming_text(server: EmbeddedLlamaServer) -> None:
    assert server.base_url is not None
    events = await collect(client_for(server.base_url), prompt("Write one sentence about cats."))
    deltas = [event.delta for event in events if isinstance(event, OutputTextDelta)]
    text = "".join(deltas)
    assert len(deltas) >= 3
    assert text.strip()
    usage = server_usage(events)
    created = events[0]
    assert isinstance(created, Created)
    assert events == [
        created,
        OutputItemAdded(Message(role="assistant", content=[])),
        *[OutputTextDelta(None, delta) for delta in deltas],
        OutputItemDone(assistant_message(text)),
        Completed(created.response_id, usage),
    ]
    assert usage.input_tokens > 0
    assert usage.output_tokens == len(deltas) or usage.output_tokens >= 3
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens


async def test_a_tool_call_through_the_constrained_envelope(server: EmbeddedLlamaServer) -> None:
    assert server.base_url is not None
    request = prompt("Use the shell tool to run: ls", tools=(SHELL_TOOL,))
    events = await collect(client_for(server.base_url), request)
    created = events[0]
    assert isinstance(created, Created)
    [done] = [event for event in events if isinstance(event, OutputItemDone)]
    call = done.item
    assert isinstance(call, FunctionCall)
    assert call == FunctionCall(
        name="shell", arguments=call.arguments, call_id=f"call_{created.response_id}_0"
    )
    arguments = json.loads(call.arguments)
    assert isinstance(arguments["command"], str)
    assert set(arguments) <= {"command"}
    assert not [event for event in events if isinstance(event, OutputTextDelta)]


async def test_after_a_tool_output_a_final_message_streams_and_stops(
    server: EmbeddedLlamaServer,
) -> None:
    assert server.base_url is not None
    call = FunctionCall(name="shell", arguments='{"command": "ls"}', call_id="call_1")
    request = Prompt(
        model=BUNDLED_NAME,
        instructions=INSTRUCTIONS,
        input=(
            user_message("Run ls with the shell tool, then tell me the file names."),
            call,
            FunctionCallOutput(call_id="call_1", output="Exit code: 0\nOutput:\nREADME.md"),
        ),
        tools=(SHELL_TOOL,),
    )
    events = await collect(client_for(server.base_url), request)
    deltas = [event.delta for event in events if isinstance(event, OutputTextDelta)]
    created = events[0]
    assert isinstance(created, Created)
    assert events == [
        created,
        OutputItemAdded(Message(role="assistant", content=[])),
        *[OutputTextDelta(None, delta) for delta in deltas],
        OutputItemDone(assistant_message("".join(deltas))),
        Completed(created.response_id, server_usage(events)),
    ]
    assert "".join(deltas).strip()


async def test_a_prompt_larger_than_n_ctx_is_a_context_window_error(
    server: EmbeddedLlamaServer,
) -> None:
    assert server.base_url is not None
    long_text = " ".join(f"word{i}" for i in range(N_CTX * 2))
    with pytest.raises(ContextWindowExceeded) as caught:
        await collect(client_for(server.base_url), prompt(long_text))
    assert not caught.value.retryable


async def test_server_killed_mid_stream_is_retried_and_the_retry_succeeds() -> None:
    first = EmbeddedLlamaServer(settings(max_tokens=400))
    base_url = first.start()
    port = int(base_url.rsplit(":", 1)[1])
    policy = RetryPolicy()
    request = prompt("Count from 1 to 200, separated by commas.")
    client = client_for(base_url)
    deltas: list[str] = []

    async def read_and_kill_after_three_deltas() -> None:
        async for event in client.stream(request):
            if isinstance(event, OutputTextDelta):
                deltas.append(event.delta)
                if len(deltas) == 3:
                    assert first.pid is not None
                    os.kill(first.pid, signal.SIGKILL)

    try:
        with pytest.raises(ProviderError) as caught:
            await read_and_kill_after_three_deltas()
    finally:
        await client.aclose()
        first.stop()
    error = caught.value
    assert len(deltas) >= 3
    assert error.retryable
    assert policy.should_retry(error, 0)
    with EmbeddedLlamaServer(settings(max_tokens=16, port=port)) as second:
        assert second.base_url == base_url
        await anyio.sleep(policy.delay_s(error, 1, 1.0))
        events = await collect(client_for(base_url), request)
    assert isinstance(events[-1], Completed)


async def test_the_session_retries_a_killed_server_per_the_retry_table(tmp_path: Path) -> None:
    """Runtime level: the sampling loop's own retry (``Reconnecting... 1/5`` after 200 ms ± 10 %)
    reaches the server restarted on the same port, and history holds the answer once."""
    from mini_codex.host import SessionOptions, open_options
    from mini_codex.protocol.session_events import (
        AgentMessageDelta,
        ErrorEvent,
        SessionEvent,
        StreamErrorEvent,
    )
    from mini_codex.rollout.reader import read_rollout

    first = EmbeddedLlamaServer(settings(max_tokens=400))
    base_url = first.start()
    port = int(base_url.rsplit(":", 1)[1])
    restarted: list[EmbeddedLlamaServer] = []

    def restart() -> None:
        second = EmbeddedLlamaServer(settings(max_tokens=16, port=port))
        restarted.append(second)
        second.start()

    events: list[SessionEvent] = []
    restarter = threading.Thread(target=restart)

    def on_event(event: SessionEvent) -> None:
        events.append(event)
        deltas = sum(isinstance(seen, AgentMessageDelta) for seen in events)
        if isinstance(event, AgentMessageDelta) and deltas == 3:
            assert first.pid is not None
            os.kill(first.pid, signal.SIGKILL)
            restarter.start()

    (tmp_path / "work").mkdir()
    client = client_for(base_url)
    options = SessionOptions(
        cwd=tmp_path / "work",
        home=tmp_path / "home",
        client=client,
        config=Config(),
        model=BUNDLED_NAME,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        on_event=on_event,
        tools=[],
    )
    try:
        async with open_options(options) as session:
            answer = await session.run_turn("Count from 1 to 200, separated by commas.")
    finally:
        await client.aclose()
        first.stop()
        restarter.join()
        for server in restarted:
            server.stop()
    assert [server.base_url for server in restarted] == [base_url]
    assert [e for e in events if isinstance(e, ErrorEvent)] == []
    retries = [e for e in events if isinstance(e, StreamErrorEvent)]
    assert retries
    assert [(e.attempt, e.max_retries) for e in retries] == [
        (n, 5) for n in range(1, len(retries) + 1)
    ]
    assert 0.18 <= retries[0].delay_s < 0.22
    history = list(session.history.items)
    final = history[-1]
    assert isinstance(final, Message)
    assert final.role == "assistant"
    assert answer is not None
    assert [item for item in history if isinstance(item, Message) and item.role == "assistant"] == [
        final
    ]
    assert session.rollout_path is not None
    recorded = [
        line.payload
        for line in read_rollout(session.rollout_path).lines
        if isinstance(line, ResponseItemLine)
    ]
    assert recorded == history
