"""``exec --json`` reports a resource-tool call as Codex 0.169 does (``mcp_tool_call`` with server
``codex`` when no server was named), checked against the recorded Codex events."""

from __future__ import annotations

import json

from mcp_harness import HERE

from mini_codex.protocol.session_events import ToolCallBegin, ToolCallEnd
from mini_codex.runtime.exec_events import ExecEventMapper

EVENTS = HERE.parent / "fixtures" / "codex_mcp" / "codex-0.169.0-everything-events.jsonl"


def test_a_resource_listing_is_an_mcp_tool_call_of_server_codex() -> None:
    codex = [json.loads(line) for line in EVENTS.read_text().splitlines()]
    [done] = [
        event["item"]
        for event in codex
        if event["type"] == "item.completed" and event["item"].get("tool") == "list_mcp_resources"
    ]
    text = done["result"]["content"][0]["text"]
    mapper = ExecEventMapper()
    started = mapper.feed(
        ToolCallBegin(call_id="c1", name="list_mcp_resources", step_id="s", payload="{}")
    )
    details = {
        "server": "codex",
        "tool": "list_mcp_resources",
        "arguments": {},
        "result": {"content": [{"type": "text", "text": text}], "structured_content": None},
    }
    ended = mapper.feed(
        ToolCallEnd(
            call_id="c1", name="list_mcp_resources", output=text, success=True, details=details
        )
    )
    [first] = [event.to_json() for event in started]
    [last] = [event.to_json() for event in ended]
    assert first["item"]["server"] == "codex"
    assert {**last["item"], "id": done["id"]} == done
