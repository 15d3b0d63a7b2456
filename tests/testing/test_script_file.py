"""The ``--model scripted:PATH`` script format: parsing, conveniences, errors with line numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_codex.errors import ConfigError
from mini_codex.models import (
    AuthenticationError,
    ConnectionFailed,
    ContextWindowExceeded,
    InvalidRequest,
    OutputItemDone,
    Prompt,
    ProviderError,
    QuotaExceeded,
    RateLimited,
    ServerError,
    StreamError,
    Timeout,
    TokenUsage,
    UsageLimitReached,
)
from mini_codex.models.base import ModelClientOptions
from mini_codex.protocol import FunctionCall, Message, OutputText, Reasoning, UnknownItem
from mini_codex.testing import (
    ERROR_KINDS,
    ScriptedFailure,
    ScriptedResponse,
    assistant,
    custom_tool_call,
    function_call,
    load_script,
    reasoning,
)
from mini_codex.testing.script_file import scripted_model_from_options


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "script.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_responses_and_failures_load_in_order(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '{"output": [{"type": "message", "content": "Listing."}, '
        '{"type": "function_call", "name": "shell", "arguments": {"command": "ls"}}], '
        '"end_turn": false}',
        "",
        '{"error": {"kind": "stream", "message": "cut", "retry_after_s": 1}, '
        '"output": [{"type": "reasoning", "summary": "hmm"}]}',
        '{"output": [{"type": "custom_tool_call", "name": "apply_patch", "input": "P", '
        '"call_id": "c9"}], "usage": {"input_tokens": 7, "output_tokens": 2}, '
        '"response_id": "r3"}',
        '{"output": [{"type": "web_search_call", "status": "completed"}]}',
    )
    steps = load_script(path)
    assert steps[0] == ScriptedResponse(
        [assistant("Listing."), function_call("shell", {"command": "ls"})], end_turn=False
    )
    failure = steps[1]
    assert isinstance(failure, ScriptedFailure)
    assert isinstance(failure.error, StreamError)
    assert (type(failure.error), str(failure.error), failure.error.retry_after_s) == (
        StreamError,
        "cut",
        1.0,
    )
    assert failure.output == (reasoning("hmm"),)
    assert steps[2] == ScriptedResponse(
        [custom_tool_call("apply_patch", "P", call_id="c9")],
        usage=TokenUsage(input_tokens=7, output_tokens=2, total_tokens=9),
        response_id="r3",
    )
    assert steps[3] == ScriptedResponse(
        [UnknownItem.model_validate({"type": "web_search_call", "status": "completed"})]
    )
    assert len(steps) == 4


def test_full_responses_api_items_load_verbatim(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '{"output": [{"type": "message", "role": "assistant", "id": "m1", '
        '"content": [{"type": "output_text", "text": "Hi", "annotations": []}]}, '
        '{"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1", '
        '"id": "f1"}, {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}]}',
    )
    (step,) = load_script(path)
    assert isinstance(step, ScriptedResponse)
    assert [item.to_json() for item in step.output] == [
        {
            "type": "message",
            "role": "assistant",
            "id": "m1",
            "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
        },
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1", "id": "f1"},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
    ]


@pytest.mark.parametrize(
    ("kind", "cls", "retryable"),
    [
        ("stream", StreamError, True),
        ("rate_limit", RateLimited, True),
        ("server", ServerError, True),
        ("connection", ConnectionFailed, True),
        ("timeout", Timeout, True),
        ("context_window", ContextWindowExceeded, False),
        ("usage_limit", UsageLimitReached, False),
        ("quota", QuotaExceeded, False),
        ("invalid_request", InvalidRequest, False),
        ("auth", AuthenticationError, False),
    ],
)
def test_every_error_kind_maps_to_its_class(
    tmp_path: Path, kind: str, cls: type[ProviderError], retryable: bool
) -> None:
    (step,) = load_script(_write(tmp_path, f'{{"error": {{"kind": "{kind}"}}}}'))
    assert isinstance(step, ScriptedFailure)
    assert (type(step.error), step.error.retryable, str(step.error)) == (
        cls,
        retryable,
        cls.DEFAULT_MESSAGE,
    )
    assert step.output == ()


def test_error_kind_table_is_complete() -> None:
    assert sorted(ERROR_KINDS) == sorted(
        [
            "stream",
            "rate_limit",
            "server",
            "connection",
            "timeout",
            "context_window",
            "usage_limit",
            "quota",
            "invalid_request",
            "auth",
        ]
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"output": [', "invalid JSON: "),
        ("[1, 2]", "expected a JSON object, got a list"),
        ('{"end_turn": true}', 'missing "output" (expected {"output": [...]} or {"error": {...}})'),
        (
            '{"output": {"type": "message"}}',
            '"output" must be a list of response items, got an object',
        ),
        ('{"output": "hello"}', '"output" must be a list of response items, got a string'),
        ('{"output": [42]}', "output item 0: expected a JSON object, got int"),
        ('{"output": [{"content": "x"}]}', 'output item 0: missing "type"'),
        (
            '{"output": [{"type": "message", "content": "a"}, '
            '{"type": "function_call", "arguments": "{}"}]}',
            "output item 1 (function_call): name: Field required",
        ),
        (
            '{"output": [{"type": "message", "role": "user", "content": "x"}]}',
            "output item 0: a model response message has role \"assistant\", not 'user'",
        ),
        (
            '{"output": [{"type": "function_call_output", "call_id": "c", "output": "x"}]}',
            "output item 0: 'function_call_output' is a tool output, "
            "not something a model produces",
        ),
        (
            '{"output": [], "end-turn": false}',
            "unknown key(s) 'end-turn' in a response line "
            "(allowed: end_turn, output, response_id, usage)",
        ),
        ('{"output": [], "end_turn": "no"}', '"end_turn" must be true or false, got a string'),
        ('{"output": [], "response_id": 3}', '"response_id" must be a string, got int'),
        ('{"output": [], "usage": {"input_tokens": 1}}', '"usage" is missing "output_tokens"'),
        (
            '{"output": [], "usage": {"input_tokens": -1, "output_tokens": 1}}',
            '"usage.input_tokens" must be a non-negative integer, got -1',
        ),
        (
            '{"error": {"kind": "explode"}}',
            '"error.kind" must be one of stream, rate_limit, server, connection, timeout, '
            "context_window, usage_limit, quota, invalid_request, auth; got 'explode'",
        ),
        ('{"error": "stream"}', '"error" must be an object with a "kind", got a string'),
        (
            '{"error": {"kind": "stream", "message": 5}}',
            '"error.message" must be a string, got int',
        ),
        (
            '{"error": {"kind": "stream", "retry_after_s": "1"}}',
            '"error.retry_after_s" must be a number, got a string',
        ),
        (
            '{"error": {"kind": "stream"}, "end_turn": true}',
            "unknown key(s) 'end_turn' in a failure line (allowed: error, output)",
        ),
    ],
)
def test_script_errors_name_the_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path, '{"output": []}', "", line)
    with pytest.raises(ConfigError) as raised:
        load_script(path)
    assert str(raised.value).startswith(f"{path}:3: {message}")


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(ConfigError, match=r"cannot read model script .*nope\.jsonl.*No such file"):
        load_script(missing)


def test_empty_script_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "", "   ")
    with pytest.raises(ConfigError) as raised:
        load_script(path)
    assert str(raised.value) == f"{path}: model script has no responses"


async def _first_done_item(path: Path) -> object:
    model = scripted_model_from_options(ModelClientOptions(model=str(path)))
    prompt = Prompt(model="m", instructions="", input=())
    events = [event async for event in model.stream(prompt)]
    return next(event.item for event in events if isinstance(event, OutputItemDone))


@pytest.mark.anyio
async def test_registry_factory_plays_the_file_with_assigned_ids(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '{"output": [{"type": "function_call", "name": "shell", "arguments": {"command": "ls"}}]}',
    )
    assert await _first_done_item(path) == FunctionCall(
        name="shell", arguments='{"command":"ls"}', call_id="call_1_0", id="fc_1_0"
    )


def test_windows_line_endings_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(b'{"output": [{"type": "message", "content": "a"}]}\r\n\r\n')
    assert load_script(path) == [
        ScriptedResponse([Message(role="assistant", content=[OutputText(text="a")])])
    ]


def test_reasoning_summary_list_form_is_kept(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '{"output": [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]}]}',
    )
    assert load_script(path) == [
        ScriptedResponse([Reasoning(summary=[{"type": "summary_text", "text": "s"}])])
    ]
