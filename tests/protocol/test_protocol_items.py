from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from mini_codex.protocol import (
    ROLLOUT_LINE_ADAPTER,
    CustomToolCall,
    EventMsgLine,
    FunctionCall,
    FunctionCallOutput,
    InputText,
    Message,
    OutputText,
    Reasoning,
    TaskComplete,
    TaskStarted,
    UnknownContent,
    UnknownEvent,
    UnknownItem,
    UnknownLine,
    WorldStateLine,
    assistant_message,
    format_timestamp,
    message_text,
    parse_response_item,
    user_message,
)


def test_constructed_items_serialize_with_type_tag_and_without_unset_optionals() -> None:
    assert user_message("hi").to_json() == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "hi"}],
    }
    assert FunctionCall(name="shell", arguments="{}", call_id="c1").to_json() == {
        "type": "function_call",
        "name": "shell",
        "arguments": "{}",
        "call_id": "c1",
    }


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "gAAA"},
        {"type": "message", "role": "assistant", "phase": "commentary", "content": []},
        {"type": "ghost_snapshot", "ghost_commit": {"id": "abc", "parent": None}},
        {"type": "custom_tool_call_output", "call_id": "c", "output": [{"type": "input_text"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_audio", "data": "x"}]},
    ],
)
def test_items_round_trip_exactly_including_nulls_and_unknown_fields(raw: dict[str, Any]) -> None:
    assert parse_response_item(raw).to_json() == raw


def test_unknown_types_decode_to_fallbacks() -> None:
    item = parse_response_item({"type": "web_search_call", "status": "completed"})
    content = parse_response_item(
        {"type": "message", "role": "user", "content": [{"type": "input_audio"}]}
    )
    assert isinstance(item, UnknownItem)
    assert isinstance(content, Message)
    assert isinstance(content.content[0], UnknownContent)


def test_known_types_decode_to_their_models() -> None:
    decoded = [
        parse_response_item(raw)
        for raw in (
            {"type": "function_call_output", "call_id": "c", "output": "ok"},
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": "*** Begin",
                "call_id": "c",
            },
            {"type": "reasoning", "summary": []},
        )
    ]
    assert [type(d) for d in decoded] == [FunctionCallOutput, CustomToolCall, Reasoning]


def test_missing_required_field_is_rejected() -> None:
    with pytest.raises(ValidationError):
        parse_response_item({"type": "function_call", "name": "x"})


def test_message_text_joins_text_parts() -> None:
    msg = Message(role="assistant", content=[OutputText(text="a"), InputText(text="b")])
    assert (message_text(msg), message_text(assistant_message("z"))) == ("ab", "z")


def test_event_aliases_decode_to_task_events_and_keep_their_name() -> None:
    started = ROLLOUT_LINE_ADAPTER.validate_python(
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "turn_started", "turn_id": "a"}}
    )
    complete = ROLLOUT_LINE_ADAPTER.validate_python(
        {"type": "event_msg", "payload": {"type": "turn_complete"}}
    )
    assert isinstance(started, EventMsgLine)
    assert started.payload == TaskStarted(type="turn_started", turn_id="a")
    assert isinstance(complete, EventMsgLine)
    assert isinstance(complete.payload, TaskComplete)
    assert started.to_json()["payload"] == {"type": "turn_started", "turn_id": "a"}


def test_unknown_line_kinds_and_events_are_kept() -> None:
    raw_line = {"timestamp": "t", "ordinal": 3, "type": "token_usage_record", "payload": {"u": 1}}
    raw_event = {"timestamp": "t", "type": "event_msg", "payload": {"type": "item_completed"}}
    line = ROLLOUT_LINE_ADAPTER.validate_python(raw_line)
    event = ROLLOUT_LINE_ADAPTER.validate_python(raw_event)
    assert isinstance(line, UnknownLine)
    assert isinstance(event, EventMsgLine)
    assert isinstance(event.payload, UnknownEvent)
    assert (line.to_json(), event.to_json()) == (raw_line, raw_event)


def test_world_state_state_must_be_an_object() -> None:
    ok = ROLLOUT_LINE_ADAPTER.validate_python(
        {"type": "world_state", "payload": {"full": True, "state": {}}}
    )
    assert isinstance(ok, WorldStateLine)
    with pytest.raises(ValidationError):
        ROLLOUT_LINE_ADAPTER.validate_python(
            {"type": "world_state", "payload": {"full": True, "state": [1]}}
        )


def test_timestamp_format_is_utc_millis_with_z() -> None:
    from datetime import datetime, timedelta, timezone

    moment = datetime(2026, 8, 22, 2, 42, 19, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert format_timestamp(moment) == "2026-08-22T00:42:19.123Z"


@pytest.mark.parametrize("bad_type", [["message"], {"a": 1}, 3, None])
def test_non_string_type_tags_are_validation_errors_not_type_errors(bad_type: object) -> None:
    with pytest.raises(ValidationError):
        parse_response_item({"type": bad_type, "role": "user", "content": []})
    with pytest.raises(ValidationError):
        ROLLOUT_LINE_ADAPTER.validate_python({"type": bad_type, "payload": {}})
