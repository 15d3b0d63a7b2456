"""Is this file a rollout at all? The first non-blank line decides (pure).

What belongs here: :func:`header_problem`, the rule that keeps the CLI from "verifying" a text
file or appending session records to a user's notes: the first non-blank line of a rollout is a
``session_meta`` record — mini-codex's, or the Codex CLI's (``{"timestamp", "type":
"session_meta", "payload": {...}}``, with or without ``ordinal``) — or the bare meta object
that opens a legacy pre-envelope Codex file (``{"id": str, "timestamp": str, ...}`` without a
``type``; see ``lines.py``). Anything else is refused with a short reason. What does not belong
here: reading the line (``reader.py``) and decoding the meta (``lines.py``).
"""

from __future__ import annotations

from typing import Final

from mini_codex.rollout.replay.lines import INVALID_JSON, parse_json

__all__ = ["MAX_HEADER_BYTES", "header_problem"]

MAX_HEADER_BYTES: Final = 16 << 20
"""The longest first line read (session metas hold instructions, but never megabytes)."""


def header_problem(first_line: bytes) -> str | None:
    """Why ``first_line`` (stripped, non-blank) does not open a rollout; None when it does."""
    obj = parse_json(first_line)
    if obj is INVALID_JSON:
        if b"\0" in first_line[:4096]:
            return "binary data"
        return "the first line is not JSON"
    if not isinstance(obj, dict):
        return f"the first line is a JSON {_json_kind(obj)}, not a session_meta record"
    kind = obj.get("type")
    if kind is None and "payload" not in obj:
        # A legacy pre-envelope file opens with the bare meta object.
        if isinstance(obj.get("id"), str) and isinstance(obj.get("timestamp"), str):
            return None
        return "the first line is a JSON object without a 'type', not a session_meta record"
    if kind != "session_meta":
        shown = kind if isinstance(kind, str) else _json_kind(kind)
        return f"the first record is {shown!r}, not session_meta"
    if not isinstance(obj.get("payload"), dict):
        return "the session_meta record has no payload object"
    return None


def _json_kind(value: object) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case _:
            return "object"
