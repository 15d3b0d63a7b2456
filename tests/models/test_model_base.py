"""The model port's data: the request trace of a Prompt and TokenUsage arithmetic."""

from __future__ import annotations

from mini_codex.models import Prompt, TokenUsage
from mini_codex.protocol import user_message


def test_prompt_trace_json_has_the_request_contents() -> None:
    prompt = Prompt(
        model="gpt-test",
        instructions="be brief",
        input=(user_message("hi"),),
        tools=({"type": "function", "name": "shell"},),
        reasoning_effort="low",
        turn_id="t1",
        step_id="s1",
        step_sequence=3,
    )
    assert prompt.to_trace_json() == {
        "turn_id": "t1",
        "step_id": "s1",
        "step_sequence": 3,
        "model": "gpt-test",
        "instructions": "be brief",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ],
        "tools": [{"type": "function", "name": "shell"}],
        "parallel_tool_calls": True,
        "reasoning": {"effort": "low"},
    }
    bare = Prompt(model="m", instructions="", input=())
    assert bare.to_trace_json() == {
        "turn_id": "",
        "step_id": "",
        "step_sequence": 0,
        "model": "m",
        "instructions": "",
        "input": [],
        "tools": [],
        "parallel_tool_calls": True,
    }


def test_token_usage_adds_up_and_serializes_with_codex_names() -> None:
    a = TokenUsage(input_tokens=10, cached_input_tokens=2, output_tokens=3, total_tokens=13)
    b = TokenUsage(input_tokens=1, output_tokens=1, reasoning_output_tokens=1, total_tokens=2)
    assert (a + b).to_json() == {
        "input_tokens": 11,
        "cached_input_tokens": 2,
        "output_tokens": 4,
        "reasoning_output_tokens": 1,
        "total_tokens": 15,
    }
