"""``exec --json`` items of the sub-agent tools: Codex 0.169's ``collab_tool_call``.

The ``multi_agent_v1__*`` calls (``host/agents``) print ``item.started`` when the call begins
(``receiver_thread_ids`` from the arguments, ``prompt`` the message of ``spawn_agent`` and
``send_input``, no ``agents_states``) and ``item.completed`` with the receivers, prompt and
``agents_states`` the tool put in ``details["collab"]``. The tools run one at a time, in call
order, as Codex's do; both items are printed when the call ends (the runtime tells every call's
begin before the first one runs). As Codex prints them, ``wait_agent`` and ``resume_agent`` are
both ``wait``, and
a call whose ids are not thread ids (refused before it starts) prints nothing. Recorded:
``tests/fixtures/codex_subagents``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Final

import orjson

from mini_codex.protocol.exec_events import CollabAgentState, CollabToolCallItem, ItemCompleted

__all__ = ["COLLAB_PREFIX", "collab_completed", "collab_started"]

COLLAB_PREFIX: Final = "multi_agent_v1__"
_TOOLS: Final = {
    "spawn_agent": "spawn_agent",
    "send_input": "send_input",
    "wait_agent": "wait",
    "resume_agent": "wait",
    "close_agent": "close_agent",
}


def _arguments(payload: str) -> dict[str, Any]:
    try:
        value = orjson.loads(payload or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _receivers(name: str, args: Mapping[str, Any]) -> list[str] | None:
    if name == "spawn_agent":
        return []
    found = args.get("targets") if name == "wait_agent" else args.get("target", args.get("id"))
    ids = found if isinstance(found, list) else [found]
    try:
        return [str(uuid.UUID(str(i))) for i in ids]
    except ValueError:
        return None


def collab_started(name: str, payload: str, sender: str) -> CollabToolCallItem | None:
    """The ``item.started`` of a call (the mapper gives it its ``id``)."""
    tool = name.removeprefix(COLLAB_PREFIX)
    if tool not in _TOOLS:
        return None
    args = _arguments(payload)
    receivers = _receivers(tool, args)
    if receivers is None:
        return None
    message = args.get("message")
    return CollabToolCallItem(
        id="",
        tool=_TOOLS[tool],
        sender_thread_id=sender,
        receiver_thread_ids=tuple(receivers),
        prompt=message if isinstance(message, str) and tool != "wait_agent" else None,
        agents_states={},
        status="in_progress",
    )


def collab_completed(
    item: CollabToolCallItem, details: Mapping[str, Any], ok: bool
) -> ItemCompleted:
    collab = details.get("collab")
    if not ok or not isinstance(collab, dict):
        return ItemCompleted(item=item.model_copy(update={"status": "failed"}))
    states = {
        key: CollabAgentState(status=str(value["status"]), message=value.get("message"))
        for key, value in (collab.get("agents_states") or {}).items()
    }
    update = {
        "receiver_thread_ids": tuple(collab.get("receiver_thread_ids") or ()),
        "prompt": collab.get("prompt"),
        "agents_states": states,
        "status": "completed",
    }
    return ItemCompleted(item=item.model_copy(update=update))
