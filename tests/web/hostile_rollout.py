"""A rollout whose every field the inspector shows carries a script payload (untrusted input).

Each payload sets ``window.__pwned`` if it ever runs: an ``onerror``/``onload`` handler, an
attribute break-out, ``</script>`` and ``<!--<script>`` (which merged an export's data and its
script into one element), in ids, names, token usage, world-state keys and values, arguments,
outputs, summaries and event text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION_ID = "01900000-0000-7000-8000-00000000bad1"
PAYLOADS = (
    '<img src=x onerror="window.__pwned=1">',
    '"><svg onload="window.__pwned=2">',
    "'><img src=x onerror=window.__pwned=3>",
    "</script><script>window.__pwned=4</script>",
    "<!--<script>window.__pwned=5</script>-->",
    "</title><img src=x onerror=window.__pwned=6>",
)
ALL = " ".join(PAYLOADS)
"""Every payload in one string (what most fields carry)."""
TOOL = PAYLOADS[0]
"""The tool name (shown as text on the page)."""


def _line(kind: str, payload: dict[str, Any], n: int) -> str:
    stamp = f"2026-09-01T10:00:{n:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload})


def hostile_lines() -> list[str]:
    usage = dict.fromkeys(("input_tokens", "cached_input_tokens", "output_tokens"), ALL)
    usage["total_tokens"] = PAYLOADS[0]
    records: list[tuple[str, dict[str, Any]]] = [
        (
            "session_meta",
            {
                "id": SESSION_ID,
                "timestamp": "2026-09-01T10:00:00.000Z",
                "cwd": ALL,
                "originator": ALL,
                "cli_version": ALL,
                "mini_codex_schema": 1,
            },
        ),
        ("event_msg", {"type": "task_started", "turn_id": ALL}),
        ("response_item", _message("user", "hello " + ALL)),
        ("event_msg", {"type": "user_message", "message": "hello " + ALL}),
        ("world_state", {"full": True, "state": {"env": {"cwd": ALL}, ALL: {ALL: ALL}}}),
        ("turn_context", {"turn_id": ALL, "cwd": ALL, "model": ALL, "summary": "auto"}),
        ("response_item", _reasoning()),
        ("response_item", _call()),
        ("event_msg", {"type": "token_count", "info": {"last_token_usage": usage}}),
        ("response_item", {"type": "function_call_output", "call_id": ALL, "output": ALL}),
        ("world_state", {"full": False, "state": {ALL: {ALL: ALL + "2"}, "env": None}}),
        (
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "c2",
                "input": "*** Begin Patch\n+" + ALL + "\n-" + ALL + "\n*** End Patch",
            },
        ),
        ("response_item", {"type": "custom_tool_call_output", "call_id": "c2", "output": ALL}),
        ("event_msg", {"type": "error", "message": ALL}),
        ("response_item", _message("assistant", ALL)),
        ("event_msg", {"type": "token_count", "info": {"last_token_usage": {"total_tokens": ALL}}}),
        ("compacted", {"message": ALL, "replacement_history": [_message("user", ALL)]}),
        ("event_msg", {"type": "task_complete", "turn_id": ALL, "last_agent_message": ALL}),
    ]
    return [_line(kind, payload, n) for n, (kind, payload) in enumerate(records)]


def _reasoning() -> dict[str, Any]:
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": ALL}]}


def _call() -> dict[str, Any]:
    return {"type": "function_call", "name": TOOL, "call_id": ALL, "arguments": ALL}


def _message(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def write_hostile(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(hostile_lines()) + "\n")
    return path
