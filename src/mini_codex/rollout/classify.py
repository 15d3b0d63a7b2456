"""Parsed JSON line → replay entry, without validating what replay may never need (pure).

What belongs here: :func:`classify`, the fast path from one parsed rollout line to an
:data:`~mini_codex.rollout.entries.Entry`, counting into ``ReadStats`` exactly as ``decode_line``
does. It validates the small payloads replay reads (turn contexts, the events it uses, world-state
lines, compaction scalars, session meta) and only shape-checks the rest: response items and
replacement histories are validated when the fold materializes them (the surviving tail). Lines
replay ignores (``token_count``, unknown events, unknown kinds) get a shape check derived from
their protocol model. What does not: the entry types (``entries.py``) and the fold.

Exact-type fast checks: a payload whose fields already have their exact JSON types needs no
pydantic; anything else (coercions, errors) is left to pydantic, so the verdict always matches
the typed path.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, TypeAlias, get_args, get_origin

from pydantic import BaseModel

from mini_codex.protocol import (
    AgentMessageEvent,
    CompactedItem,
    SessionMeta,
    TaskComplete,
    TaskStarted,
    ThreadRolledBack,
    TokenCount,
    TurnAborted,
    TurnContextItem,
    UserMessageEvent,
    WorldStateItem,
)
from mini_codex.protocol.events import EVENT_MSG_ADAPTER
from mini_codex.rollout.entries import (
    CONTEXT_ROLES,
    INTER_AGENT_COMMUNICATION,
    CompactedEntry,
    Entry,
    InterAgentEntry,
    ItemEntry,
    RolledBackEntry,
    SessionMetaEntry,
    TurnAbortedEntry,
    TurnCompleteEntry,
    TurnContextEntry,
    TurnStartedEntry,
    UserMessageEntry,
    WorldStateEntry,
    boundary_of,
    compacted_entry,
    event_entry,
)
from mini_codex.rollout.lines import (
    DECODE_ERRORS,
    GHOST_SNAPSHOT,
    ReadStats,
    Skip,
    drop_ghost_snapshots,
    normalize_envelope,
)

__all__ = ["EVENT_MODELS", "classify", "exact_field_spec", "has_exact_fields"]


class Outcome(enum.Enum):
    """Why :func:`classify` built no entry for a well-formed or malformed line."""

    BAD = "bad"
    SKIP = "skip"


def _raw_item_entry(payload: object) -> ItemEntry | Outcome:
    """Shape-check a raw response item (the fold validates the ones it keeps)."""
    if type(payload) is not dict:
        return Outcome.BAD
    kind = payload.get("type")
    if type(kind) is not str:
        return Outcome.BAD
    if kind != "message":
        if kind == GHOST_SNAPSHOT:
            return Outcome.SKIP
        return ItemEntry(payload, None, False, True)
    role = payload.get("role")
    content = payload.get("content")
    if type(role) is not str or type(content) is not list:
        return Outcome.BAD
    parts: list[tuple[str, str | None]] = []
    for part in content:
        if type(part) is not dict:
            return Outcome.BAD
        part_kind = part.get("type")
        if type(part_kind) is not str:
            return Outcome.BAD
        if part_kind == "input_text" or part_kind == "output_text":
            text = part.get("text")
            if type(text) is not str:
                return Outcome.BAD
            parts.append((part_kind, text))
        else:
            parts.append((part_kind, None))
    boundary = boundary_of(role, parts)
    return ItemEntry(payload, None, boundary, not (boundary or role in CONTEXT_ROLES))


def _raw_compacted(payload: object) -> CompactedEntry | None:
    if not isinstance(payload, dict):
        return None
    cleaned = drop_ghost_snapshots(payload)
    if cleaned is None:
        return None
    payload = cleaned
    history = payload.get("replacement_history")
    if history is not None and not (
        isinstance(history, list)
        and all(isinstance(entry, dict) and isinstance(entry.get("type"), str) for entry in history)
    ):
        return None
    scalars = {key: value for key, value in payload.items() if key != "replacement_history"}
    try:
        item = CompactedItem.model_validate(scalars)
    except DECODE_ERRORS:
        return None
    return compacted_entry(item, None, history)


# --- exact-type fast checks -----------------------------------------------------------------------

FieldSpec: TypeAlias = dict[str, tuple[frozenset[type] | None, bool]]
"""Field name → (the JSON types that validate as-is, or None for any value; required)."""


def exact_field_spec(model: type[BaseModel]) -> FieldSpec | None:
    """The exact JSON types each field of ``model`` accepts without coercion, when simple.

    None when some field needs real validation (nested models, typed containers); then only
    pydantic can decide. The ``type`` tag is skipped: dispatch already checked it.
    """
    spec: FieldSpec = {}
    for name, info in model.model_fields.items():
        if name == "type":
            continue
        allowed: set[type] = set()
        for option in get_args(info.annotation) or (info.annotation,):
            if option is Any:
                allowed = set()
                break
            origin = get_origin(option)
            if option in (str, int, bool, type(None), dict, list):
                allowed.add(option)
            elif origin in (list, dict) and all(
                arg is Any or arg is str for arg in get_args(option)
            ):
                allowed.add(origin)
            else:
                return None
        alias = info.alias or name
        spec[alias] = (frozenset(allowed) if allowed else None, info.is_required())
    return spec


def has_exact_fields(payload: dict[str, Any], spec: FieldSpec) -> bool:
    for name, (types, required) in spec.items():
        if name in payload:
            if types is not None and type(payload[name]) not in types:
                return False
        elif required:
            return False
    return True


EVENT_MODELS: dict[str, type[BaseModel]] = {
    "task_started": TaskStarted,
    "turn_started": TaskStarted,
    "task_complete": TaskComplete,
    "turn_complete": TaskComplete,
    "turn_aborted": TurnAborted,
    "user_message": UserMessageEvent,
    "thread_rolled_back": ThreadRolledBack,
    "agent_message": AgentMessageEvent,
    "token_count": TokenCount,
}
"""Event types the protocol models (the rest decode as ``UnknownEvent``)."""

_EVENT_SPECS = {kind: exact_field_spec(model) for kind, model in EVENT_MODELS.items()}

_EVENT_BUILDERS: dict[str, Callable[[dict[str, Any]], Entry]] = {
    "task_started": lambda payload: TurnStartedEntry(payload.get("turn_id")),
    "turn_started": lambda payload: TurnStartedEntry(payload.get("turn_id")),
    "task_complete": lambda payload: TurnCompleteEntry(payload.get("turn_id")),
    "turn_complete": lambda payload: TurnCompleteEntry(payload.get("turn_id")),
    "turn_aborted": lambda payload: TurnAbortedEntry(payload.get("turn_id")),
    "user_message": lambda payload: UserMessageEntry(),
    "thread_rolled_back": lambda payload: RolledBackEntry(max(payload["num_turns"], 0)),
}


def _raw_event(payload: object) -> Entry | Outcome | None:
    """The entry of an ``event_msg`` payload; None for events replay ignores."""
    if type(payload) is not dict:
        return Outcome.BAD
    kind = payload.get("type")
    if type(kind) is not str:
        return Outcome.BAD
    if kind not in EVENT_MODELS:
        return None  # UnknownEvent: any payload with a string type
    spec = _EVENT_SPECS[kind]
    if spec is None or not has_exact_fields(payload, spec):
        # Coercions and errors are pydantic's call.
        return event_entry(EVENT_MSG_ADAPTER.validate_python(payload))
    builder = _EVENT_BUILDERS.get(kind)
    return builder(payload) if builder is not None else None


def _raw_world_state(payload: object) -> WorldStateEntry:
    if type(payload) is dict:
        full = payload.get("full")
        state = payload.get("state")
        if type(full) is bool and type(state) is dict:
            return WorldStateEntry(full, state)
    item = WorldStateItem.model_validate(payload)  # lax forms, or a ValidationError
    return WorldStateEntry(item.full, item.state)


def _raw_turn_context(payload: object) -> TurnContextEntry:
    return TurnContextEntry(TurnContextItem.model_validate(payload))


def _raw_session_meta(payload: object) -> SessionMetaEntry:
    return SessionMetaEntry(SessionMeta.model_validate(payload))


def _raw_compacted_or_bad(payload: object) -> CompactedEntry | Outcome:
    entry = _raw_compacted(payload)
    return Outcome.BAD if entry is None else entry


_HANDLERS: dict[str, Callable[[object], Entry | Outcome | None]] = {
    "response_item": _raw_item_entry,
    "event_msg": _raw_event,
    "world_state": _raw_world_state,
    "turn_context": _raw_turn_context,
    "compacted": _raw_compacted_or_bad,
    "session_meta": _raw_session_meta,
}


def classify(obj: object, stats: ReadStats) -> Entry | None:
    """The replay view of one parsed JSON line, counting it into ``stats`` like ``decode_line``.

    Response items and replacement histories are only shape-checked here; the fold validates the
    ones it keeps and counts failures as bad lines then.
    """
    stats.lines += 1
    envelope: dict[str, Any]
    if type(obj) is dict and "payload" in obj:
        envelope = obj
        kind = obj.get("type")
        if type(kind) is not str:
            stats.bad_lines += 1
            return None
        # Cheap paths for the most common well-formed lines; anything else takes the general path.
        payload = obj["payload"]
        timestamp = obj.get("timestamp")
        if type(payload) is dict and (timestamp is None or type(timestamp) is str):
            if kind == "response_item":
                inner = payload.get("type")
                if type(inner) is str and inner != "message" and inner != GHOST_SNAPSHOT:
                    return ItemEntry(payload, None, False, True)
            elif kind == "event_msg":
                if payload.get("type") == "token_count":
                    info = payload.get("info")
                    limits = payload.get("rate_limits")
                    if (info is None or type(info) is dict) and (
                        limits is None or type(limits) is dict
                    ):
                        return None
            elif kind == "world_state":
                full = payload.get("full")
                state = payload.get("state")
                if type(full) is bool and type(state) is dict:
                    return WorldStateEntry(full, state)
    else:
        normalized = normalize_envelope(obj)  # legacy shapes and malformed lines
        if normalized is None:
            stats.bad_lines += 1
            return None
        if isinstance(normalized, Skip):
            return None
        envelope = normalized
    timestamp = envelope.get("timestamp")
    if timestamp is not None and type(timestamp) is not str:
        stats.bad_lines += 1
        return None
    kind = envelope["type"]
    payload = envelope.get("payload")
    handler = _HANDLERS.get(kind)
    if handler is None:
        stats.unknown_items += 1
        if kind == INTER_AGENT_COMMUNICATION and type(payload) is dict:
            return InterAgentEntry(payload)
        return None
    try:
        entry = handler(payload)
    except DECODE_ERRORS:
        entry = Outcome.BAD
    if isinstance(entry, Outcome):
        if entry is Outcome.BAD:
            stats.bad_lines += 1
        return None
    return entry
