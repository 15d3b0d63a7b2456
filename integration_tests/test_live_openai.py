"""Live tests against the real OpenAI API (paid): skipped unless ``OPENAI_API_KEY`` is set.

Not part of CI (pytest's ``testpaths`` is ``tests``). Run them on purpose::

    OPENAI_API_KEY=sk-... uv run pytest integration_tests -m live

``MINI_CODEX_LIVE_MODEL`` picks the Responses model (default ``gpt-5-mini``),
``MINI_CODEX_LIVE_CHAT_MODEL`` the Chat Completions one (default ``gpt-4.1-mini``).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from mini_codex.config import ModelProviderConfig
from mini_codex.models import (
    Completed,
    ModelClientOptions,
    ModelEvent,
    OutputItemDone,
    Prompt,
)
from mini_codex.models.chat_completions import ChatCompletionsClient
from mini_codex.models.errors import AuthenticationError
from mini_codex.models.openai_responses import OpenAIResponsesClient
from mini_codex.protocol.items import (
    FunctionCall,
    FunctionCallOutput,
    Message,
    Reasoning,
    ResponseItem,
    message_text,
    user_message,
)

API_KEY = os.environ.get("OPENAI_API_KEY")
MODEL = os.environ.get("MINI_CODEX_LIVE_MODEL", "gpt-5-mini")
CHAT_MODEL = os.environ.get("MINI_CODEX_LIVE_CHAT_MODEL", "gpt-4.1-mini")

pytestmark = [
    pytest.mark.live,
    pytest.mark.anyio,
    pytest.mark.skipif(not API_KEY, reason="OPENAI_API_KEY is not set"),
]

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather of a city.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def options(model: str, api_key: str | None = API_KEY, wire_api: Any = "responses") -> Any:
    provider = ModelProviderConfig(
        base_url=os.environ.get("OPENAI_BASE_URL"), env_key="OPENAI_API_KEY", wire_api=wire_api
    )
    return ModelClientOptions(model=model, provider=provider, api_key=api_key)


async def run(client: Any, prompt: Prompt) -> list[ModelEvent]:
    return [event async for event in client.stream(prompt)]


def outputs(events: list[ModelEvent]) -> list[ResponseItem]:
    return [event.item for event in events if isinstance(event, OutputItemDone)]


async def test_live_text_reply_with_usage() -> None:
    client = OpenAIResponsesClient.from_options(options(MODEL))
    try:
        events = await run(
            client,
            Prompt(
                model=MODEL,
                instructions="Answer with one word.",
                input=(user_message("Reply with exactly: pong"),),
            ),
        )
    finally:
        await client.aclose()
    completed = events[-1]
    assert isinstance(completed, Completed)
    assert completed.usage is not None
    assert completed.usage.input_tokens > 0
    texts = [message_text(item) for item in outputs(events) if isinstance(item, Message)]
    assert "pong" in " ".join(texts).lower()


async def test_live_function_call_then_follow_up_with_encrypted_reasoning() -> None:
    """A tool call, then the follow-up request carrying reasoning + call + output (store=false)."""
    client = OpenAIResponsesClient.from_options(options(MODEL))
    question = user_message("What is the weather in Paris? Use the tool.")
    try:
        first = await run(
            client,
            Prompt(
                model=MODEL, instructions="Use tools.", input=(question,), tools=(WEATHER_TOOL,)
            ),
        )
        items = outputs(first)
        calls = [item for item in items if isinstance(item, FunctionCall)]
        assert [call.name for call in calls][:1] == ["get_weather"]
        if any(isinstance(item, Reasoning) for item in items):
            assert all(item.encrypted_content for item in items if isinstance(item, Reasoning))
        answers = [FunctionCallOutput(call_id=call.call_id, output="sunny, 21 C") for call in calls]
        second = await run(
            client,
            Prompt(
                model=MODEL,
                instructions="Use tools.",
                input=(question, *items, *answers),
                tools=(WEATHER_TOOL,),
            ),
        )
    finally:
        await client.aclose()
    texts = [message_text(item) for item in outputs(second) if isinstance(item, Message)]
    assert "21" in " ".join(texts)


async def test_live_chat_completions_text_and_tool_call() -> None:
    client = ChatCompletionsClient.from_options(options(CHAT_MODEL, wire_api="chat"))
    try:
        events = await run(
            client,
            Prompt(
                model=CHAT_MODEL,
                instructions="Use tools.",
                input=(user_message("What is the weather in Oslo? Use the tool."),),
                tools=(WEATHER_TOOL,),
            ),
        )
    finally:
        await client.aclose()
    calls = [item for item in outputs(events) if isinstance(item, FunctionCall)]
    assert [call.name for call in calls][:1] == ["get_weather"]
    completed = events[-1]
    assert isinstance(completed, Completed)
    assert completed.usage is not None


async def test_live_invalid_api_key_is_a_clear_authentication_error() -> None:
    client = OpenAIResponsesClient.from_options(options(MODEL, api_key="sk-invalid-key"))
    prompt = Prompt(model=MODEL, instructions="", input=(user_message("hi"),))
    try:
        with pytest.raises(AuthenticationError, match="invalid API key"):
            await run(client, prompt)
    finally:
        await client.aclose()
