"""``ExecEventMapper`` (pure): session events in, Codex exec events out, for the cases the
recorded scenarios do not cover: failed MCP calls, unparsable patches, warnings, interrupted
turns, token usage, and item ids across turns."""

from __future__ import annotations

import json
from typing import Any

from mini_codex.protocol import TaskComplete, TaskStarted, TokenCount, TurnAborted
from mini_codex.protocol.session_events import (
    ErrorEvent,
    ItemCompleted,
    SessionConfigured,
    SessionEvent,
    ToolCallBegin,
    ToolCallEnd,
    WarningEvent,
)
from mini_codex.runtime.exec_events import ExecEventMapper

START = [
    SessionConfigured(session_id="t-1", model="m", cwd="/w"),
    TaskStarted(turn_id="turn-1"),
]


def feed(events: list[SessionEvent], mapper: ExecEventMapper | None = None) -> list[dict[str, Any]]:
    mapper = mapper or ExecEventMapper()
    return [out.to_json() for event in events for out in mapper.feed(event)]


def begin(call_id: str, name: str, payload: Any) -> ToolCallBegin:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return ToolCallBegin(call_id=call_id, name=name, step_id="s", payload=text)


def test_a_failed_mcp_call_carries_the_error_message() -> None:
    events = [
        *START,
        begin("c1", "mcp__docs__search", {"q": "x"}),
        ToolCallEnd(
            call_id="c1", name="mcp__docs__search", output="server docs crashed", success=False
        ),
        TaskComplete(turn_id="turn-1"),
    ]
    started = {
        "id": "item_0",
        "type": "mcp_tool_call",
        "server": "docs",
        "tool": "search",
        "arguments": {"q": "x"},
        "result": None,
        "error": None,
        "status": "in_progress",
    }
    assert feed(events) == [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
        {"type": "item.started", "item": started},
        {
            "type": "item.completed",
            "item": {**started, "status": "failed", "error": {"message": "server docs crashed"}},
        },
        {
            "type": "turn.completed",
            "usage": {
                "input_tokens": 0,
                "cached_input_tokens": 0,
                "cache_write_input_tokens": 0,
                "output_tokens": 0,
                "reasoning_output_tokens": 0,
            },
        },
    ]


def test_unparsable_patches_and_unknown_tools_make_no_items() -> None:
    events = [
        *START,
        begin("c1", "apply_patch", "not a patch"),
        ToolCallEnd(call_id="c1", name="apply_patch", output="apply_patch failed", success=False),
        begin("c2", "my_tool", {}),
        ToolCallEnd(call_id="c2", name="my_tool", output="ok", success=True),
    ]
    assert feed(events)[2:] == []


def test_patch_kinds_and_the_function_form() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Delete File: b.txt\n"
        "*** Update File: c.txt\n@@\n-x\n+y\n*** End Patch\n"
    )
    out = feed([*START, begin("c1", "apply_patch", {"input": patch})])
    assert out[2]["item"]["changes"] == [
        {"path": "/w/a.txt", "kind": "add"},
        {"path": "/w/b.txt", "kind": "delete"},
        {"path": "/w/c.txt", "kind": "update"},
    ]


def test_warnings_errors_usage_and_ids_across_turns() -> None:
    mapper = ExecEventMapper()
    usage = {
        "input_tokens": 50,
        "cached_input_tokens": 20,
        "output_tokens": 5,
        "reasoning_output_tokens": 2,
        "total_tokens": 55,
    }
    first = feed(
        [
            *START,
            WarningEvent(message="MCP server x is still starting"),
            ItemCompleted(
                turn_id="turn-1",
                item={
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "hi"}],
                },
            ),
            ItemCompleted(turn_id="turn-1", item={"type": "reasoning", "summary": []}),
            TokenCount(info={"total_token_usage": usage}),
            TaskComplete(turn_id="turn-1"),
        ],
        mapper,
    )
    assert first[2:] == [
        {
            "type": "item.completed",
            "item": {"id": "item_0", "type": "error", "message": "MCP server x is still starting"},
        },
        {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "hi"}},
        {
            "type": "turn.completed",
            "usage": {
                "input_tokens": 50,
                "cached_input_tokens": 20,
                "cache_write_input_tokens": 0,
                "output_tokens": 5,
                "reasoning_output_tokens": 2,
            },
        },
    ]
    assert (mapper.final_message, mapper.failed) == ("hi", None)
    second = feed(
        [
            TaskStarted(turn_id="turn-2"),
            ErrorEvent(message="boom", turn_id="turn-2"),
            TaskComplete(turn_id="turn-2"),
        ],
        mapper,
    )
    assert second == [
        {"type": "turn.started"},
        {"type": "error", "message": "boom"},
        {"type": "turn.failed", "error": {"message": "boom"}},
    ]
    assert (mapper.final_message, mapper.failed) == (None, "boom")


def test_an_interrupted_turn_ends_without_a_turn_event_and_drops_its_todo_list() -> None:
    plan = {"plan": [{"step": "a", "status": "in_progress"}]}
    out = feed([*START, begin("c1", "update_plan", plan), TurnAborted(turn_id="turn-1")])
    assert out[2:] == [
        {
            "type": "item.started",
            "item": {
                "id": "item_0",
                "type": "todo_list",
                "items": [{"text": "a", "completed": False}],
            },
        },
    ]


def test_a_compaction_has_no_exec_event_and_its_warning_is_an_error_item() -> None:
    from mini_codex.protocol.session_events import ContextCompacted, WarningEvent
    from mini_codex.runtime.compaction import LONG_THREADS_WARNING

    events = feed(
        [
            TaskStarted(turn_id="t1"),
            ContextCompacted(turn_id="t1", trigger="mid_turn", window_number=1),
            WarningEvent(message=LONG_THREADS_WARNING),
        ]
    )
    assert events == [
        {"type": "turn.started"},
        {
            "type": "item.completed",
            "item": {"id": "item_0", "type": "error", "message": LONG_THREADS_WARNING},
        },
    ]
