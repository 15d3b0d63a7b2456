"""Builders for rollout files used by the rollout reader/replay tests.

``RolloutBuilder`` appends Codex-shaped lines (``{"timestamp", "type", "payload"}``) as plain JSON
objects; ``typed()`` decodes them with the protocol union, ``write()`` puts them in a JSONL file.
Timestamps advance by one millisecond per line. The ``new_rollout`` fixture is the class itself (a
factory), usable from hypothesis tests too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from mini_codex.protocol import ROLLOUT_LINE_ADAPTER, RolloutLine

JsonDict = dict[str, Any]

WINDOW_1 = "01900000-0000-7000-8000-000000000001"
WINDOW_2 = "01900000-0000-7000-8000-000000000002"
WINDOW_3 = "01900000-0000-7000-8000-000000000003"
"""UUID v7 window ids."""


def user_item(text: str) -> JsonDict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def assistant_item(text: str) -> JsonDict:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def developer_item(text: str) -> JsonDict:
    return {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": text}],
    }


def inter_agent_payload(content: str, *, trigger_turn: bool = True) -> JsonDict:
    return {
        "author": "/root",
        "recipient": "/root/worker",
        "other_recipients": [],
        "content": content,
        "trigger_turn": trigger_turn,
    }


def inter_agent_assistant_item(content: str) -> JsonDict:
    """An assistant message carrying a serialized inter-agent instruction."""
    return assistant_item(orjson.dumps(inter_agent_payload(content)).decode())


def call_item(call_id: str, name: str = "shell") -> JsonDict:
    return {"type": "function_call", "name": name, "arguments": "{}", "call_id": call_id}


def output_item(call_id: str, output: str = "ok") -> JsonDict:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def turn_context_payload(
    turn_id: str | None = None,
    model: str = "model-a",
    comp_hash: str | None = None,
    realtime_active: bool | None = None,
) -> JsonDict:
    payload: JsonDict = {
        "cwd": "/repo",
        "approval_policy": "on-request",
        "sandbox_policy": {"type": "workspace-write"},
        "model": model,
        "summary": "auto",
    }
    if turn_id is not None:
        payload["turn_id"] = turn_id
    if comp_hash is not None:
        payload["comp_hash"] = comp_hash
    if realtime_active is not None:
        payload["realtime_active"] = realtime_active
    return payload


class RolloutBuilder:
    """Accumulates rollout lines as JSON objects, oldest first.

    The item helpers of this module are available as static methods (``new_rollout.user_item``).
    """

    WINDOW_1 = WINDOW_1
    WINDOW_2 = WINDOW_2
    WINDOW_3 = WINDOW_3
    user_item = staticmethod(user_item)
    assistant_item = staticmethod(assistant_item)
    developer_item = staticmethod(developer_item)
    inter_agent_payload = staticmethod(inter_agent_payload)
    inter_agent_assistant_item = staticmethod(inter_agent_assistant_item)
    call_item = staticmethod(call_item)
    output_item = staticmethod(output_item)
    turn_context_payload = staticmethod(turn_context_payload)

    def __init__(self) -> None:
        self.lines: list[JsonDict] = []
        self._ms = 0

    # --- raw -------------------------------------------------------------------------------------

    def timestamp(self) -> str:
        self._ms += 1
        seconds, millis = divmod(self._ms, 1000)
        minutes, seconds = divmod(seconds, 60)
        return f"2026-08-22T00:{minutes:02d}:{seconds:02d}.{millis:03d}Z"

    def copy(self) -> RolloutBuilder:
        """A new builder holding the same lines (later additions are independent)."""
        other = RolloutBuilder()
        other.lines = list(self.lines)
        other._ms = self._ms
        return other

    def raw(self, obj: JsonDict) -> RolloutBuilder:
        self.lines.append(obj)
        return self

    def line(self, kind: str, payload: Any) -> RolloutBuilder:
        return self.raw({"timestamp": self.timestamp(), "type": kind, "payload": payload})

    # --- kinds -----------------------------------------------------------------------------------

    def session_meta(self, session_id: str = "thread-1", **fields: Any) -> RolloutBuilder:
        return self.line("session_meta", {"id": session_id, **fields})

    def item(self, payload: JsonDict) -> RolloutBuilder:
        return self.line("response_item", payload)

    def items(self, payloads: Iterable[JsonDict]) -> RolloutBuilder:
        for payload in payloads:
            self.item(payload)
        return self

    def user(self, text: str) -> RolloutBuilder:
        return self.item(user_item(text))

    def assistant(self, text: str) -> RolloutBuilder:
        return self.item(assistant_item(text))

    def event(self, payload: JsonDict) -> RolloutBuilder:
        return self.line("event_msg", payload)

    def user_message_event(self, text: str = "hi") -> RolloutBuilder:
        return self.event({"type": "user_message", "message": text})

    def turn_started(self, turn_id: str | None) -> RolloutBuilder:
        return self.event({"type": "task_started", "turn_id": turn_id})

    def turn_complete(self, turn_id: str | None) -> RolloutBuilder:
        return self.event({"type": "task_complete", "turn_id": turn_id})

    def turn_aborted(self, turn_id: str | None = None) -> RolloutBuilder:
        payload: JsonDict = {"type": "turn_aborted", "reason": "interrupted"}
        if turn_id is not None:
            payload["turn_id"] = turn_id
        return self.event(payload)

    def rolled_back(self, num_turns: int) -> RolloutBuilder:
        return self.event({"type": "thread_rolled_back", "num_turns": num_turns})

    def turn_context(
        self,
        turn_id: str | None = None,
        model: str = "model-a",
        comp_hash: str | None = None,
        realtime_active: bool | None = None,
    ) -> RolloutBuilder:
        payload = turn_context_payload(turn_id, model, comp_hash, realtime_active)
        return self.line("turn_context", payload)

    def world_state(self, state: Any, *, full: bool = True) -> RolloutBuilder:
        return self.line("world_state", {"full": full, "state": state})

    def compacted(
        self,
        message: str = "summary",
        replacement_history: Sequence[JsonDict] | None = None,
        **fields: Any,
    ) -> RolloutBuilder:
        payload: JsonDict = {"message": message, **fields}
        if replacement_history is not None:
            payload["replacement_history"] = list(replacement_history)
        return self.line("compacted", payload)

    def inter_agent(self, content: str) -> RolloutBuilder:
        return self.line("inter_agent_communication", inter_agent_payload(content))

    def completed_user_turn(
        self,
        turn_id: str,
        text: str,
        *,
        model: str = "model-a",
        context_turn_id: str | None = "same",
        items: Sequence[JsonDict] = (),
        complete: bool = True,
    ) -> RolloutBuilder:
        """TurnStarted, UserMessage, the user item, TurnContext, ``items``, TurnComplete."""
        self.turn_started(turn_id).user_message_event(text).user(text)
        self.turn_context(turn_id if context_turn_id == "same" else context_turn_id, model)
        self.items(items)
        if complete:
            self.turn_complete(turn_id)
        return self

    # --- output ----------------------------------------------------------------------------------

    def typed(self) -> list[RolloutLine]:
        return [ROLLOUT_LINE_ADAPTER.validate_python(line) for line in self.lines]

    def jsonl(self) -> bytes:
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.jsonl())
        return path


@pytest.fixture(scope="session")
def new_rollout() -> type[RolloutBuilder]:
    """The builder class: ``rollout = new_rollout()``."""
    return RolloutBuilder
