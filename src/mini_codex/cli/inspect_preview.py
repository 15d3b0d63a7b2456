"""One-line previews for ``rollout inspect``: items, events, settings and world-state diffs (pure).

What belongs here: turning one response item, event or ``turn_context`` into a short label and
text, and a world-state merge patch into readable ``old → new`` lines. What does not: grouping
lines into turns and steps (``inspect_timeline.py``) and styling (``inspect_render.py``).
"""

from __future__ import annotations

import shlex
from typing import Any, Literal, TypeAlias

import orjson

from mini_codex import protocol
from mini_codex.jsonmerge import Json, JsonObject
from mini_codex.protocol import ResponseItem, TurnContextItem
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)
from mini_codex.rollout.replay.entries import is_user_turn_boundary

__all__ = [
    "RowKind",
    "compact_json",
    "context_changes",
    "context_summary",
    "diff_lines",
    "event_text",
    "item_preview",
    "preview",
    "setting",
]

PREVIEW_CHARS = 160
"""Characters kept of a one-line preview (the renderer cuts to the terminal width)."""
VALUE_CHARS = 40
"""Characters kept of each old/new value in a world-state diff."""
MAX_DIFF_KEYS = 6
"""A section change with more changed keys is summarized instead of listed."""

RowKind: TypeAlias = Literal[
    "user",
    "assistant",
    "context",
    "reasoning",
    "call",
    "output",
    "item",
    "turn_context",
    "world_state",
    "compaction",
    "checkpoint",
    "rollback",
    "event",
    "meta",
    "unknown",
]


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first non-blank line of ``text``, stripped, cut to ``limit`` characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0]
    if len(first) > limit:
        first = first[: limit - 1] + "…"
    if len(lines) > 1:
        more = len(lines) - 1
        first += f" (+{more} line{'s' if more != 1 else ''})"
    return first


def compact_json(value: object, limit: int) -> str:
    """Compact JSON text of ``value``, cut to ``limit`` characters."""
    try:
        text = orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def item_preview(item: ResponseItem) -> tuple[RowKind, str, str]:
    """(kind, label, one-line text) of one response item."""
    match item:
        case protocol.Message(role=role, content=content):
            texts = [_part_text(part) for part in content]
            text = preview(texts[0]) if texts else ""
            if len(texts) > 1:
                text += f" (+{len(texts) - 1} parts)"
            if role == "user" and is_user_turn_boundary(item):
                return ("user", "user", text)
            if role == "assistant":
                return ("assistant", "assistant", text)
            return ("context", "user context" if role == "user" else role, text)
        case protocol.Reasoning():
            summary = next(
                (
                    part["text"]
                    for part in item.summary
                    if isinstance(part.get("text"), str) and part["text"].strip()
                ),
                None,
            )
            if summary is not None:
                text = preview(summary)
            else:
                text = "(encrypted)" if item.encrypted_content else ""
            return ("reasoning", "reasoning", text)
        case protocol.FunctionCall():
            try:
                arguments = compact_json(orjson.loads(item.arguments), PREVIEW_CHARS)
            except orjson.JSONDecodeError:
                arguments = preview(item.arguments)
            return ("call", f"call {item.name}", f"{arguments}  [{item.call_id}]")
        case protocol.CustomToolCall():
            text = f"{preview(item.input)}  [{item.call_id}]"
            return ("call", f"call {item.name}", text)
        case protocol.FunctionCallOutput() | protocol.CustomToolCallOutput():
            return ("output", "output", f"[{item.call_id}] {_output_text(item.output)}")
        case protocol.UnknownItem():
            return ("item", item.type, "")
        case _:
            return ("item", getattr(item, "type", "item"), "")


def _part_text(part: object) -> str:
    if isinstance(part, protocol.InputText | protocol.OutputText):
        return part.text
    if isinstance(part, protocol.InputImage):
        return "<image>"
    return f"<{getattr(part, 'type', 'part')}>"


def _output_text(output: str | list[dict[str, Any]]) -> str:
    if isinstance(output, list):
        texts = [part.get("text") for part in output if isinstance(part.get("text"), str)]
        first = preview(str(texts[0])) if texts else ""
        return f"{first} ({len(output)} parts)" if first else f"<{len(output)} content parts>"
    if output.startswith("{"):
        # Codex 2025 shell outputs are JSON strings: {"output": ..., "metadata": {"exit_code"}}
        try:
            value = orjson.loads(output)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            metadata = value.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            prefix = f"exit {code}: " if code is not None else ""
            return prefix + (preview(value["output"]) or "(empty)")
    return preview(output) or "(empty)"


def event_text(event: object) -> str:
    if isinstance(event, protocol.UserMessageEvent | protocol.AgentMessageEvent):
        return preview(event.message)
    if isinstance(event, SafetyDecision):
        command = f" `{shlex.join(event.command)}`" if event.command else ""
        reason = f" — {event.reason}" if event.reason else ""
        return preview(f"{event.tool}{command}: {event.source} → {event.decision}{reason}")
    if isinstance(event, ExecApprovalRequest):
        return preview(f"asks to run `{shlex.join(event.command)}`: {event.reason or ''}")
    if isinstance(event, ApplyPatchApprovalRequest):
        files = ", ".join(f"{kind} {path}" for path, kind in event.changes.items())
        return preview(f"asks to apply a patch ({files}): {event.reason or ''}")
    if isinstance(event, protocol.TokenCount):
        info = event.info or {}
        total = info.get("total_token_usage")
        if isinstance(total, dict) and "total_tokens" in total:
            return f"total tokens {total['total_tokens']}"
        return ""
    return ""


def setting(value: object) -> str:
    """A setting value: strings as they are, policies by their ``type``/``mode``."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        kind = value.get("type", value.get("mode"))
        if isinstance(kind, str):
            return kind
    return compact_json(value, VALUE_CHARS)


_CONTEXT_FIELDS = ("model", "effort", "cwd", "approval_policy", "sandbox_policy", "current_date")
"""``turn_context`` fields compared between consecutive lines."""


def context_summary(context: TurnContextItem) -> str:
    """The first ``turn_context`` of a file: its main settings."""
    parts = [f"model {setting(context.model)}"]
    if context.effort:
        parts.append(f"effort {context.effort}")
    parts.append(f"cwd {setting(context.cwd)}")
    parts.append(f"approval {setting(context.approval_policy)}")
    parts.append(f"sandbox {setting(context.sandbox_policy)}")
    return " · ".join(parts)


def context_changes(previous: TurnContextItem, current: TurnContextItem) -> str:
    """A later ``turn_context``: the settings that changed since the previous one."""
    changes = [
        f"{name} {setting(old)} → {setting(new)}"
        for name in _CONTEXT_FIELDS
        if (old := getattr(previous, name)) != (new := getattr(current, name))
    ]
    return " · ".join(changes) if changes else "unchanged"


# --- world-state diffs ----------------------------------------------------------------------------

_ABSENT = object()


def diff_lines(before: JsonObject, patch: JsonObject, after: Json) -> list[str]:
    """Readable lines for a merge ``patch`` taking ``before`` to ``after``, per section."""
    after_object = after if isinstance(after, dict) else {}
    lines: list[str] = []
    for section, change in patch.items():
        if change is None:
            if section in before:
                lines.append(f"- {section}: removed")
            continue
        if section not in before:
            value = after_object.get(section, change)
            lines.append(f"+ {section}: added {compact_json(value, VALUE_CHARS)}")
            continue
        leaves: list[tuple[str, object, object]] = []
        _leaves(before[section], change, after_object.get(section, _ABSENT), section, leaves)
        if not leaves:
            lines.append(f"~ {section}: unchanged")
        elif len(leaves) > MAX_DIFF_KEYS:
            shown = ", ".join(path for path, _, _ in leaves[:3])
            lines.append(f"~ {section}: {len(leaves)} keys changed ({shown}, …)")
        else:
            lines.extend(f"~ {path}: {_value(old)} → {_value(new)}" for path, old, new in leaves)
    return lines


def _leaves(
    before: object, patch: object, after: object, path: str, out: list[tuple[str, object, object]]
) -> None:
    if isinstance(patch, dict) and isinstance(before, dict) and isinstance(after, dict):
        for key, change in patch.items():
            old = before.get(key, _ABSENT)
            new = after.get(key, _ABSENT)
            if old is _ABSENT and new is _ABSENT:
                continue  # removing what was not there
            _leaves(old, change, new, f"{path}.{_key(key)}", out)
        return
    if before != after:
        out.append((path, before, after))


def _key(key: str) -> str:
    """A path component; quoted (JSON) when it is not a plain identifier-like word."""
    plain = key.replace("_", "a").replace("-", "a").isalnum()
    return key if plain else orjson.dumps(key).decode()


def _value(value: object) -> str:
    return "(absent)" if value is _ABSENT else compact_json(value, VALUE_CHARS)
