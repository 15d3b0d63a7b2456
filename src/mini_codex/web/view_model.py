"""The inspector's view of a session: line references, steps, turns, and item rows (data only).

What belongs here: the dataclasses ``session_view.build_view`` fills and their JSON shapes (the
documents of docs/ui.md), and the one-row preview of a response item. What does not: how lines
are grouped (``session_view.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mini_codex.jsonmerge import JsonObject
from mini_codex.protocol import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    Message,
    Reasoning,
    ResponseItem,
    message_text,
)
from mini_codex.rollout.replay.forward import TurnSegment

__all__ = [
    "LineRef",
    "SessionView",
    "StepView",
    "TurnView",
    "event_text",
    "item_row",
    "step_id_for",
]


@dataclass(frozen=True)
class LineRef:
    """Where a decoded line sits in its file."""

    offset: int
    """Byte offset of the line in the (decompressed) file."""
    line: int | None
    """1-based line number, when known (a window read from the middle of a file has none)."""


def step_id_for(offset: int) -> str:
    return f"o{offset}"


@dataclass
class StepView:
    step_id: str
    sequence: int
    index: int
    """Position of the line that opened the step in the decoded lines."""
    request_index: int
    """Lines before this index were recorded before the step's model request."""
    ref: LineRef
    turn_id: str | None
    model: str | None
    world_state: JsonObject | None = None
    """The baseline when the request was sent (replayed)."""
    previous_world_state: JsonObject | None = None
    changes: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    token_usage: dict[str, Any] | None = None
    started: str | None = None
    ended: str | None = None
    has_output: bool = False
    after_tool_output: bool = False
    requested: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "step_id": self.step_id,
            "sequence": self.sequence,
            "line": self.ref.line,
            "offset": self.ref.offset,
            "turn_id": self.turn_id,
            "model": self.model,
            "token_usage": self.token_usage,
            "duration_ms": _duration_ms(self.started, self.ended),
            "world_state_change": self.changes,
            "items": self.items,
            "tool_calls": self.tool_calls,
        }


@dataclass
class TurnView:
    number: int
    turn_id: str | None
    ref: LineRef
    status: str = "open"
    items: list[dict[str, Any]] = field(default_factory=list)
    steps: list[StepView] = field(default_factory=list)
    segment: TurnSegment | None = None
    rolled_back_by: LineRef | None = None
    """The rollback marker that discards this turn."""

    def to_json(self) -> dict[str, Any]:
        marker = self.rolled_back_by
        return {
            "turn_id": self.turn_id,
            "number": self.number,
            "line": self.ref.line,
            "offset": self.ref.offset,
            "status": self.status,
            "rolled_back": marker is not None,
            "rolled_back_at": marker.line if marker is not None else None,
            "items": self.items,
            "steps": [step.to_json() for step in self.steps],
        }


@dataclass
class SessionView:
    turns: list[TurnView] = field(default_factory=list)
    steps: dict[str, StepView] = field(default_factory=dict)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    rollbacks: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "turns": [turn.to_json() for turn in self.turns],
            "compactions": self.compactions,
            "checkpoints": self.checkpoints,
            "rollbacks": self.rollbacks,
            "warnings": self.warnings,
        }


def item_row(item: ResponseItem, ref: LineRef) -> dict[str, Any]:
    row: dict[str, Any] = {"line": ref.line, "offset": ref.offset, "kind": item.type}
    match item:
        case Message():
            row["role"] = item.role
            row["text"] = message_text(item)
        case Reasoning():
            row["text"] = " ".join(
                str(part.get("text", "")) for part in item.to_json().get("summary", []) or []
            )
        case FunctionCall():
            row.update(name=item.name, call_id=item.call_id, text=item.arguments)
        case CustomToolCall():
            row.update(name=item.name, call_id=item.call_id, text=item.input)
        case FunctionCallOutput() | CustomToolCallOutput():
            output = item.output
            text = output if isinstance(output, str) else _parts_text(output)
            row.update(call_id=item.call_id, text=text)
        case _:
            row["text"] = ""
    return row


def _parts_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return str(parts)
    return "\n".join(str(part.get("text", "")) for part in parts if isinstance(part, dict))


def event_text(event: Any) -> str:
    data = event.to_json() if hasattr(event, "to_json") else {}
    data.pop("type", None)
    text = ", ".join(f"{key}={value}" for key, value in data.items())
    return text[:300]


def _duration_ms(started: str | None, ended: str | None) -> int | None:
    if started is None or ended is None:
        return None
    try:
        start = datetime.fromisoformat(started.replace("Z", "+00:00"))
        end = datetime.fromisoformat(ended.replace("Z", "+00:00"))
    except ValueError:
        return None
    return round((end - start).total_seconds() * 1000)
