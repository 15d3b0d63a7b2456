"""Parsed JSON line → replay entry, validating only what replay reads or keeps (pure).

What belongs here: :func:`classify`, the fast path from one parsed rollout line to an
:data:`~mini_codex.rollout.replay.entries.Entry`, and :func:`classify_lines`, the same from raw line
text (the replay hot path), both counting into ``ReadStats`` exactly as ``decode_line`` does.
They validate the small payloads replay reads (the events it uses, world-state lines, compaction
scalars, session meta), prove response items and turn contexts valid with exact-type checks
(``exact.py``; pydantic decides when a check is not conclusive) without building their models,
and only shape-check replacement histories (validated when the fold adopts them). Lines replay
ignores (``token_count``, unknown events, unknown kinds) get a shape check derived from their
protocol model. What does not: the entry types (``entries.py``) and the fold.

Exact-type fast checks: a payload whose fields already have their exact JSON types needs no
pydantic; anything else (coercions, errors) is left to pydantic, so the verdict always matches
the typed path.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

import orjson
from pydantic import BaseModel

from mini_codex.context.contextual import CONTEXTUAL_USER_PREFIXES, is_contextual_text
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
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)
from mini_codex.protocol.events import EVENT_MSG_ADAPTER
from mini_codex.rollout.replay.entries import (
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
    compacted_entry,
    event_entry,
    is_inter_agent_text,
)
from mini_codex.rollout.replay.exact import (
    ITEM_CHECKS,
    PART_CHECKS,
    exact_field_spec,
    fields_check,
    item_source,
)
from mini_codex.rollout.replay.history import ItemSource
from mini_codex.rollout.replay.lines import (
    DECODE_ERRORS,
    GHOST_SNAPSHOT,
    ReadStats,
    Skip,
    drop_ghost_snapshots,
    normalize_envelope,
)

__all__ = [
    "EVENTS",
    "EVENT_MODELS",
    "LINE_KINDS",
    "TURN_CONTEXT_EXACT",
    "classify",
    "classify_parsed_line",
    "content_facts",
    "count_lines",
    "exact_field_spec",
    "message_entry",
    "message_facts",
]


_ITEM_CHECKS = ITEM_CHECKS
_PART_CHECKS = PART_CHECKS
_MESSAGE_CHECKED = "message" in ITEM_CHECKS
_STR_NONE = frozenset({str, type(None)})
_CONTEXT_STARTS = (
    frozenset(prefix[0] for prefix in CONTEXTUAL_USER_PREFIXES)
    if all(not prefix[0].isalpha() for prefix in CONTEXTUAL_USER_PREFIXES)
    else None
)
"""The first characters of the contextual fragment markers, when none is a letter (so case
folding cannot produce one): a text starting with anything else (after no whitespace) is not
contextual, without running ``is_contextual_text``."""
"""Text parts are checked by the message shape check itself; the exact check adds the id and
the other modelled parts (only while the message check is current, see ``exact.py``)."""


class Outcome(enum.Enum):
    """Why :func:`classify` built no entry for a well-formed or malformed line."""

    BAD = "bad"
    SKIP = "skip"


def _raw_item_entry(payload: object, source: ItemSource) -> ItemEntry | Outcome:
    """Shape-check a raw response item and prove it valid (``source`` is kept when it is).

    Shape failures are bad lines at once; an item with the right shape that does not validate
    becomes an entry without a source (counted as a bad line only if the fold keeps it).
    """
    if type(payload) is not dict:
        return Outcome.BAD
    kind = payload.get("type")
    if type(kind) is not str:
        return Outcome.BAD
    if kind == "message":
        entry = message_entry(payload, source)
        return Outcome.BAD if entry is None else entry
    if kind == GHOST_SNAPSHOT:
        return Outcome.SKIP
    check = _ITEM_CHECKS.get(kind)
    if check is not None and check(payload):
        return ItemEntry(source, False, True)
    valid = item_source(payload)
    return ItemEntry(source if valid is payload else valid, False, True)


def message_entry(payload: dict[str, Any], source: ItemSource) -> ItemEntry | None:
    """The entry of a ``message`` item payload (None: a bad line)."""
    facts = message_facts(payload)
    if facts is None:
        return None
    boundary, closer, exact = facts
    kept: ItemSource | None = source
    if not exact:
        valid = item_source(payload)
        kept = source if valid is payload else valid
    return ItemEntry(kept, boundary, closer)


def message_facts(payload: dict[str, Any]) -> tuple[bool, bool, bool] | None:
    """(boundary, closer, exact) of a ``message`` payload; None when it fails the shape check.

    One pass over the parts does the shape check (role, parts with string types, text parts
    with string texts), the user-turn boundary rule of ``entries.boundary_of`` (a user message
    without a contextual ``input_text`` part; an assistant message whose only part is an
    ``output_text`` inter-agent instruction) and the exact check (the id and the other modelled
    parts): ``exact`` True means the payload validates as is.
    """
    role = payload.get("role")
    content = payload.get("content")
    if type(role) is not str or type(content) is not list:
        return None
    exact = _MESSAGE_CHECKED and ("id" not in payload or type(payload["id"]) in _STR_NONE)
    return content_facts(role, content, exact)


def content_facts(
    role: str, content: list[Any], exact: bool = _MESSAGE_CHECKED
) -> tuple[bool, bool, bool] | None:
    """:func:`message_facts` from a message's ``role`` and ``content`` list, ``exact`` saying
    whether the rest of the message (its id) validates as is."""
    user = role == "user"
    contextual = False
    for part in content:
        if type(part) is not dict:
            return None
        part_kind = part.get("type")
        if type(part_kind) is not str:
            return None
        if part_kind == "input_text":
            text = part.get("text")
            if type(text) is not str:
                return None
            if (
                user
                and not contextual
                and (_CONTEXT_STARTS is None or text[:1] in _CONTEXT_STARTS or text[:1].isspace())
            ):
                contextual = is_contextual_text(text)
        elif part_kind == "output_text":
            if type(part.get("text")) is not str:
                return None
        elif exact and part_kind in _PART_CHECKS:
            exact = _PART_CHECKS[part_kind](part)
    if user:
        return not contextual, False, exact
    if role == "assistant":
        boundary = (
            len(content) == 1
            and content[0]["type"] == "output_text"
            and content[0]["text"].startswith("{")  # is_inter_agent_text's first test, inline
            and is_inter_agent_text(content[0]["text"])
        )
        return boundary, not boundary, exact
    return False, role not in CONTEXT_ROLES, exact


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


# --- events ---------------------------------------------------------------------------------------

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
    "exec_approval_request": ExecApprovalRequest,
    "apply_patch_approval_request": ApplyPatchApprovalRequest,
    "safety_decision": SafetyDecision,
}
"""Event types the protocol models (the rest decode as ``UnknownEvent``)."""

_EVENT_BUILDERS: dict[str, Callable[[dict[str, Any]], Entry]] = {
    "task_started": lambda payload: TurnStartedEntry(payload.get("turn_id")),
    "turn_started": lambda payload: TurnStartedEntry(payload.get("turn_id")),
    "task_complete": lambda payload: TurnCompleteEntry(payload.get("turn_id")),
    "turn_complete": lambda payload: TurnCompleteEntry(payload.get("turn_id")),
    "turn_aborted": lambda payload: TurnAbortedEntry(payload.get("turn_id")),
    "user_message": lambda payload: UserMessageEntry(),
    "thread_rolled_back": lambda payload: RolledBackEntry(max(payload["num_turns"], 0)),
}


def _exact_check(model: type[BaseModel]) -> Callable[[dict[str, Any]], bool] | None:
    spec = exact_field_spec(model)
    return fields_check(spec) if spec is not None else None


EVENTS: dict[str, tuple[Callable[[dict[str, Any]], bool] | None, Callable[..., Entry] | None]] = {
    kind: (_exact_check(model), _EVENT_BUILDERS.get(kind)) for kind, model in EVENT_MODELS.items()
}
"""Modelled event type → (its exact-type check, or None when only pydantic can decide; the
entry builder, or None when replay ignores the event)."""


def _raw_event(payload: object) -> Entry | Outcome | None:
    """The entry of an ``event_msg`` payload; None for events replay ignores."""
    if type(payload) is not dict:
        return Outcome.BAD
    kind = payload.get("type")
    if type(kind) is not str:
        return Outcome.BAD
    known = EVENTS.get(kind)
    if known is None:
        return None  # UnknownEvent: any payload with a string type
    exact, builder = known
    if exact is None or not exact(payload):
        # Coercions and errors are pydantic's call.
        return event_entry(EVENT_MSG_ADAPTER.validate_python(payload))
    return builder(payload) if builder is not None else None


def _raw_world_state(payload: object) -> WorldStateEntry:
    if type(payload) is dict:
        full = payload.get("full")
        state = payload.get("state")
        if type(full) is bool and type(state) is dict:
            return WorldStateEntry(full, state)
    item = WorldStateItem.model_validate(payload)  # lax forms, or a ValidationError
    return WorldStateEntry(item.full, item.state)


TURN_CONTEXT_EXACT = _exact_check(TurnContextItem)


def _raw_turn_context(payload: object) -> TurnContextEntry:
    if type(payload) is dict and TURN_CONTEXT_EXACT is not None and TURN_CONTEXT_EXACT(payload):
        get = payload.get
        return TurnContextEntry(
            payload, get("turn_id"), get("model"), get("comp_hash"), get("realtime_active")
        )
    return TurnContextEntry.of(TurnContextItem.model_validate(payload))


def _raw_session_meta(payload: object) -> SessionMetaEntry:
    return SessionMetaEntry(SessionMeta.model_validate(payload))


def _raw_compacted_or_bad(payload: object) -> CompactedEntry | Outcome:
    entry = _raw_compacted(payload)
    return Outcome.BAD if entry is None else entry


_HANDLERS: dict[str, Callable[[object], Entry | Outcome | None]] = {
    "response_item": lambda payload: _raw_item_entry(payload, payload),  # type: ignore[arg-type]
    "event_msg": _raw_event,
    "world_state": _raw_world_state,
    "turn_context": _raw_turn_context,
    "compacted": _raw_compacted_or_bad,
    "session_meta": _raw_session_meta,
}

LINE_KINDS = frozenset((*_HANDLERS, INTER_AGENT_COMMUNICATION))
"""The line ``type`` values :func:`classify` acts on: a well-enveloped line of any other
(string) ``type`` is only counted in ``stats.unknown_items``."""


def classify(obj: object, stats: ReadStats) -> Entry | None:
    """The replay view of one parsed JSON line, counting it into ``stats`` like ``decode_line``.

    Response items are shape-checked and proven valid here (kept as their parsed JSON); an item
    of the right shape that does not validate is counted as a bad line only if the fold keeps
    it. Replacement histories are shape-checked here and validated when the fold adopts them.
    """
    stats.lines += 1
    return _classify(obj, stats, None)


def count_lines(raw_lines: Iterable[bytes], stats: ReadStats) -> None:
    """Count raw lines into ``stats`` exactly as classifying them would (blank ones skipped)."""
    loads = orjson.loads
    invalid = orjson.JSONDecodeError
    for raw in raw_lines:
        line = raw.strip()
        if not line:
            continue
        stats.lines += 1
        try:
            obj = loads(line)
        except invalid:
            stats.bad_lines += 1
            continue
        _classify(obj, stats, line)


def classify_parsed_line(obj: object, stats: ReadStats, raw: bytes) -> Entry | None:
    """:func:`classify` for a line already counted in ``stats.lines``; ``raw`` is its text
    (kept instead of the parsed item when a response item proves valid)."""
    return _classify(obj, stats, raw)


def _classify(obj: object, stats: ReadStats, raw: bytes | None) -> Entry | None:
    """:func:`classify` without the line count; ``raw`` is the line's text when there is one."""
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
                item = _raw_item_entry(payload, payload if raw is None else raw)
                if type(item) is ItemEntry:
                    return item
                if item is Outcome.BAD:
                    stats.bad_lines += 1
                return None
            if kind == "event_msg":
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
