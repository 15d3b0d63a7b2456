"""Decoding one rollout line: JSON text → typed ``RolloutLine`` (pure).

What belongs here: parsing one line as JSON, normalizing it to the Codex envelope
``{"timestamp", "type", "payload"}`` (legacy pre-envelope records are converted, legacy
``ghost_snapshot`` items are dropped, also inside compacted replacement histories), validating it
with the protocol union, and counting into :class:`ReadStats`. What does not: file I/O
(``reader.py``), the lazily validated replay view (``entries.py``) and the reconstruction fold
(``reconstruct.py``).

Legacy pre-envelope files (mid-2025) start with a bare ``{id, timestamp, instructions, git}``
header, then hold ``{"record_type": "state"}`` markers and bare items (``{"type": "message", ...}``)
without ``timestamp`` and ``payload``. The header becomes a ``session_meta`` line, bare items become
``response_item`` lines and markers are skipped (they carry nothing replay needs).

Counting (spec §5.4): every non-blank line adds to ``lines``; invalid JSON and lines that do not
decode (not an object, a known kind with a malformed payload, a ``world_state`` whose ``state`` is
not an object, ...) add to ``bad_lines``; lines of a kind the protocol does not model
(``token_usage_record``, ``inter_agent_communication``, ...) add to ``unknown_items``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ValidationError

from mini_codex.protocol import ROLLOUT_LINE_ADAPTER, RolloutLine, UnknownLine

GHOST_SNAPSHOT = "ghost_snapshot"
"""Legacy response item type (per-turn git snapshots) that replay always drops."""

LEGACY_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        GHOST_SNAPSHOT,
    }
)
"""Response item types that appear bare (without an envelope) in legacy pre-envelope files."""


@dataclass(slots=True)
class ReadStats:
    """Counters of one read (mutable accumulator; :meth:`copy` for a snapshot)."""

    lines: int = 0
    """Non-blank lines seen."""
    bad_lines: int = 0
    """Lines that are not valid JSON or do not decode as a rollout line."""
    unknown_items: int = 0
    """Lines of a kind this version does not model (kept, ignored by replay)."""

    def copy(self) -> ReadStats:
        return ReadStats(self.lines, self.bad_lines, self.unknown_items)

    def to_json(self) -> dict[str, int]:
        return {
            "lines": self.lines,
            "bad_lines": self.bad_lines,
            "unknown_items": self.unknown_items,
        }


DECODE_ERRORS: tuple[type[Exception], ...] = (ValidationError, TypeError)
"""What validating a parsed JSON value can raise. ``TypeError`` comes from the protocol's tag
functions when a ``type`` field holds an unhashable value (a list or an object)."""


class Skip(enum.Enum):
    """Why a well-formed line produces no rollout line."""

    MARKER = "marker"
    """A legacy ``{"record_type": ...}`` marker."""
    GHOST = "ghost"
    """A legacy ``ghost_snapshot`` response item."""


class _Invalid(enum.Enum):
    INVALID = "invalid"


INVALID_JSON = _Invalid.INVALID
"""Returned by :func:`parse_json` for text that is not JSON."""


def parse_json(raw: bytes | str) -> object:
    """Parse one line; :data:`INVALID_JSON` when it is not valid JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return INVALID_JSON


def normalize_envelope(obj: object) -> dict[str, Any] | Skip | None:
    """Return the Codex envelope for ``obj``, a :class:`Skip` reason, or None when malformed.

    The result is a new dict when anything was converted or dropped; ``obj`` is never mutated.
    """
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if kind is None:
        if "record_type" in obj:
            return Skip.MARKER
        if isinstance(obj.get("id"), str):
            # Legacy header: the session meta itself, without an envelope.
            return {"timestamp": obj.get("timestamp"), "type": "session_meta", "payload": obj}
        return None
    if not isinstance(kind, str):
        return None
    if kind in LEGACY_ITEM_TYPES and "payload" not in obj and "timestamp" not in obj:
        # Legacy bare response item.
        if kind == GHOST_SNAPSHOT:
            return Skip.GHOST
        return {"type": "response_item", "payload": obj}
    payload = obj.get("payload")
    if kind == "response_item":
        if isinstance(payload, dict) and payload.get("type") == GHOST_SNAPSHOT:
            return Skip.GHOST
    elif kind == "compacted" and isinstance(payload, dict):
        cleaned = drop_ghost_snapshots(payload)
        if cleaned is None:
            return None
        if cleaned is not payload:
            return {**obj, "payload": cleaned}
    return obj


def drop_ghost_snapshots(payload: dict[str, Any]) -> dict[str, Any] | None:
    """A ``compacted`` payload without ghost snapshots in its replacement history.

    Returns ``payload`` itself when nothing was dropped, and None when the payload breaks the
    metadata rule (``replacement_history_metadata`` without a history, or of another length).
    """
    history = payload.get("replacement_history")
    metadata = payload.get("replacement_history_metadata")
    if metadata is not None:
        if not isinstance(history, list) or not isinstance(metadata, list):
            return None
        if len(metadata) != len(history):
            return None
    if not isinstance(history, list):
        return payload
    keep = [
        index
        for index, item in enumerate(history)
        if not (isinstance(item, dict) and item.get("type") == GHOST_SNAPSHOT)
    ]
    if len(keep) == len(history):
        return payload
    cleaned = {**payload, "replacement_history": [history[index] for index in keep]}
    if isinstance(metadata, list):
        cleaned["replacement_history_metadata"] = [metadata[index] for index in keep]
    return cleaned


def decode_line(obj: object, stats: ReadStats | None = None) -> RolloutLine | None:
    """Decode one parsed JSON value into a typed line, or None (counted as bad or skipped)."""
    if stats is None:
        stats = ReadStats()
    stats.lines += 1
    envelope = normalize_envelope(obj)
    if envelope is None:
        stats.bad_lines += 1
        return None
    if isinstance(envelope, Skip):
        return None
    try:
        line = ROLLOUT_LINE_ADAPTER.validate_python(envelope)
    except DECODE_ERRORS:
        stats.bad_lines += 1
        return None
    if isinstance(line, UnknownLine):
        stats.unknown_items += 1
    return line


def decode_text(raw: bytes | str, stats: ReadStats | None = None) -> RolloutLine | None:
    """Parse and decode one line of text; invalid JSON is counted as a bad line."""
    obj = parse_json(raw)
    if obj is INVALID_JSON:
        if stats is not None:
            stats.lines += 1
            stats.bad_lines += 1
        return None
    return decode_line(obj, stats)
