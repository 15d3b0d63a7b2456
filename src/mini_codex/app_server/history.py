"""Threads as the v2 protocol shows them: the ``Thread`` object, and turns read from a rollout.

``turns_of`` reads a rollout (ours or the Codex CLI's) forward: a ``task_started`` event opens a
turn (a user message outside any turn opens one too, as in Codex rollouts), user input becomes a
``userMessage`` item, an assistant message an ``agentMessage``, a reasoning summary a
``reasoning`` item, a shell call a ``commandExecution`` (with its recorded output), a
``compacted`` line a ``contextCompaction``; ``task_complete`` ends a turn ``completed`` and
``turn_aborted`` ``interrupted``. Contextual user messages (environment context, AGENTS.md) are
not user input and are left out.
"""

from __future__ import annotations

import calendar
import time
from pathlib import Path
from typing import Any

import orjson

from mini_codex.app_server.items import command_text
from mini_codex.context.contextual import is_user_input_message
from mini_codex.protocol import (
    CompactedLine,
    EventMsgLine,
    FunctionCall,
    FunctionCallOutput,
    InputImage,
    InputText,
    Message,
    Reasoning,
    ResponseItemLine,
    TaskComplete,
    TaskStarted,
    TurnAborted,
    message_text,
)
from mini_codex.rollout.reader import read_rollout
from mini_codex.runtime.exec_events import SHELL_TOOLS

__all__ = ["parse_timestamp", "thread_json", "turns_of"]

JsonDict = dict[str, Any]
CLI_VERSION = "mini-codex"


def parse_timestamp(value: str | None) -> int:
    """Unix seconds of a rollout timestamp (``2026-01-01T00:00:00.000Z``); 0 when unknown."""
    if not value:
        return 0
    try:
        return calendar.timegm(time.strptime(value[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return 0


def thread_json(
    *,
    thread_id: str,
    cwd: str,
    created_at: int,
    updated_at: int,
    preview: str,
    path: Path | None,
    status: JsonDict,
    model_provider: str,
    model: str | None = None,
    name: str | None = None,
    ephemeral: bool = False,
    forked_from: str | None = None,
    turns: list[JsonDict] | None = None,
) -> JsonDict:
    return {
        "id": thread_id,
        "sessionId": thread_id,
        "forkedFromId": forked_from,
        "preview": preview,
        "ephemeral": ephemeral,
        "projectId": None,
        "modelProvider": model_provider,
        "model": model,
        "createdAt": created_at,
        "updatedAt": updated_at,
        "status": status,
        "path": str(path) if path is not None else None,
        "cwd": cwd,
        "cliVersion": CLI_VERSION,
        "source": "vscode",
        "name": name,
        "turns": turns or [],
    }


def _user_content(item: Message) -> list[JsonDict]:
    content: list[JsonDict] = []
    for part in item.content:
        if isinstance(part, InputText):
            content.append({"type": "text", "text": part.text, "text_elements": []})
        elif isinstance(part, InputImage):
            content.append({"type": "image", "url": part.image_url})
    return content


def _command(call: FunctionCall) -> str:
    try:
        args = orjson.loads(call.arguments) if call.arguments.strip() else {}
    except orjson.JSONDecodeError:
        args = {}
    command = args.get("command", args.get("cmd", "")) if isinstance(args, dict) else ""
    return command_text(command)


def _output_text(output: str | list[dict[str, Any]]) -> str:
    if isinstance(output, str):
        return output
    return "".join(str(part.get("text", "")) for part in output if isinstance(part, dict))


class _Turns:
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.turns: list[JsonDict] = []
        self.current: JsonDict | None = None
        self.commands: dict[str, JsonDict] = {}
        self.count = 0

    def open(self, turn_id: str | None, at: int) -> JsonDict:
        self.close("completed", at)
        self.count += 1
        self.current = {
            "id": turn_id or f"turn-{self.count}",
            "items": [],
            "itemsView": "full",
            "status": "completed",
            "error": None,
            "startedAt": at,
            "completedAt": None,
            "durationMs": None,
        }
        self.turns.append(self.current)
        return self.current

    def close(self, status: str, at: int) -> None:
        if self.current is not None:
            self.current["status"] = status
            self.current["completedAt"] = at
            started = self.current["startedAt"]
            self.current["durationMs"] = max(0, at - started) * 1000 if started else None
            self.current = None

    def add(self, item: JsonDict, at: int) -> None:
        turn = self.current if self.current is not None else self.open(None, at)
        turn["items"].append(item)

    def item(self, payload: Any, at: int) -> None:
        n = sum(len(t["items"]) for t in self.turns)
        if isinstance(payload, Message):
            if payload.role == "assistant":
                text = message_text(payload)
                self.add(
                    {"type": "agentMessage", "id": payload.id or f"item-{n}", "text": text}, at
                )
            elif is_user_input_message(payload):
                if self.current is None:
                    self.open(None, at)
                content = _user_content(payload)
                self.add({"type": "userMessage", "id": f"item-{n}", "content": content}, at)
        elif isinstance(payload, Reasoning):
            summary = [str(p.get("text", "")) for p in payload.summary if isinstance(p, dict)]
            if any(summary):
                rid = payload.id or f"item-{n}"
                self.add({"type": "reasoning", "id": rid, "summary": summary, "content": []}, at)
        elif isinstance(payload, FunctionCall) and payload.name in SHELL_TOOLS:
            command = _command(payload)
            item: JsonDict = {
                "type": "commandExecution",
                "id": payload.call_id,
                "command": command,
                "cwd": self.cwd,
                "processId": None,
                "source": "agent",
                "status": "completed",
                "commandActions": [{"type": "unknown", "command": command}],
                "aggregatedOutput": None,
                "exitCode": None,
                "durationMs": None,
            }
            self.commands[payload.call_id] = item
            self.add(item, at)
        elif isinstance(payload, FunctionCallOutput) and payload.call_id in self.commands:
            self.commands.pop(payload.call_id)["aggregatedOutput"] = _output_text(payload.output)


def turns_of(path: Path, cwd: str) -> list[JsonDict]:
    """The turns recorded in the rollout at ``path``."""
    rollout = read_rollout(path)
    turns = _Turns(cwd)
    for line in rollout.lines:
        at = parse_timestamp(line.timestamp)
        match line:
            case ResponseItemLine(payload=payload):
                turns.item(payload, at)
            case CompactedLine():
                turns.add({"type": "contextCompaction", "id": f"compaction-{at}"}, at)
            case EventMsgLine(payload=TaskStarted(turn_id=turn_id)):
                turns.open(turn_id, at)
            case EventMsgLine(payload=TaskComplete()):
                turns.close("completed", at)
            case EventMsgLine(payload=TurnAborted()):
                turns.close("interrupted", at)
            case _:
                pass
    return turns.turns
