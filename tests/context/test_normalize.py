"""Prompt normalization: every call answered, no orphan outputs, stored history untouched."""

from __future__ import annotations

from mini_codex.context import ContextManager, normalize_history
from mini_codex.protocol.items import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    ResponseItem,
    UnknownItem,
    assistant_message,
    parse_response_item,
    user_message,
)


def call(call_id: str) -> FunctionCall:
    return FunctionCall(name="shell", arguments='{"command":["ls"]}', call_id=call_id)


def test_orphan_call_gets_an_aborted_output_right_after_it() -> None:
    items: list[ResponseItem] = [
        user_message("go"),
        call("c1"),
        call("c2"),
        FunctionCallOutput(call_id="c2", output="ok"),
        assistant_message("done"),
    ]

    assert normalize_history(items) == [
        user_message("go"),
        call("c1"),
        FunctionCallOutput(call_id="c1", output="aborted"),
        call("c2"),
        FunctionCallOutput(call_id="c2", output="ok"),
        assistant_message("done"),
    ]


def test_orphan_custom_tool_call_gets_a_custom_aborted_output() -> None:
    patch = CustomToolCall(name="apply_patch", input="*** Begin Patch", call_id="p1")

    assert normalize_history([patch, user_message("next")]) == [
        patch,
        CustomToolCallOutput(call_id="p1", output="aborted"),
        user_message("next"),
    ]


def test_orphan_outputs_are_dropped() -> None:
    items: list[ResponseItem] = [
        FunctionCallOutput(call_id="gone", output="x"),
        user_message("hi"),
        CustomToolCallOutput(call_id="also_gone", output="y"),
        call("c1"),
        FunctionCallOutput(call_id="c1", output="ok"),
    ]

    assert normalize_history(items) == [
        user_message("hi"),
        call("c1"),
        FunctionCallOutput(call_id="c1", output="ok"),
    ]


def test_outputs_pair_with_calls_of_their_own_kind() -> None:
    items: list[ResponseItem] = [call("same"), CustomToolCallOutput(call_id="same", output="x")]

    assert normalize_history(items) == [
        call("same"),
        FunctionCallOutput(call_id="same", output="aborted"),
    ]


def test_local_shell_call_is_answered_by_a_function_call_output() -> None:
    shell = parse_response_item(
        {"type": "local_shell_call", "call_id": "s1", "status": "completed", "action": {}}
    )
    orphan = parse_response_item({"type": "local_shell_call", "call_id": "s2", "action": {}})
    output = FunctionCallOutput(call_id="s1", output="ok")

    assert isinstance(shell, UnknownItem)
    assert normalize_history([shell, output, orphan]) == [
        shell,
        output,
        orphan,
        FunctionCallOutput(call_id="s2", output="aborted"),
    ]


def test_well_formed_history_comes_back_equal() -> None:
    items: list[ResponseItem] = [
        user_message("a"),
        call("c"),
        FunctionCallOutput(call_id="c", output="o"),
    ]

    result = normalize_history(items)

    assert result == items
    assert result is not items


def test_for_prompt_never_changes_stored_history() -> None:
    items: list[ResponseItem] = [
        FunctionCallOutput(call_id="gone", output="x"),
        user_message("hi"),
        call("c1"),
    ]
    history = ContextManager(items)

    prompt = history.for_prompt()

    assert prompt == [
        user_message("hi"),
        call("c1"),
        FunctionCallOutput(call_id="c1", output="aborted"),
    ]
    assert history.items == tuple(items)
    assert len(items) == 3
