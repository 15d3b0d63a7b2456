"""The replay view of a rollout line: a small tagged union with lazily validated items (pure).

What belongs here: :data:`Entry`, the facts the reconstruction fold needs from one line (kind,
turn ids, "is this a user-turn boundary", world-state payloads, compaction windows), built either
from a typed line (:func:`entry_from_line`) or straight from parsed JSON (:func:`classify`), and the
user-turn boundary rules. What does not: the fold (``replay.py``) and file I/O (``reader.py``).

Why a separate view: validating every line with pydantic costs several times the JSON parse, and
replay needs the full models only for what ends up in its result. :func:`classify` validates the
small payloads replay reads (turn contexts, events it uses, world-state lines, compaction scalars,
session meta) and only shape-checks the rest; response items and replacement histories are
validated when the fold materializes them (the items of the surviving tail). Lines replay ignores
(``token_count``, unknown events, unknown kinds) get a shape check mirroring their protocol model.

User-turn boundaries (spec §6.1): an ordinary user message (role ``user`` and no contextual
fragment such as ``<environment_context>`` or ``# AGENTS.md instructions``), an assistant message
whose only part is a serialized inter-agent instruction, and an ``inter_agent_communication`` line.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, assert_never, get_args, get_origin

import orjson
from pydantic import BaseModel

from mini_codex.jsonmerge import JsonObject
from mini_codex.protocol import (
    AgentMessageEvent,
    CompactedItem,
    CompactedLine,
    EventMsgLine,
    InputText,
    Message,
    OutputText,
    ResponseItem,
    ResponseItemLine,
    RolloutLine,
    SessionMeta,
    SessionMetaLine,
    TaskComplete,
    TaskStarted,
    ThreadRolledBack,
    TokenCount,
    TurnAborted,
    TurnContextItem,
    TurnContextLine,
    UnknownItem,
    UnknownLine,
    UserMessageEvent,
    WorldStateItem,
    WorldStateLine,
)
from mini_codex.protocol.events import EVENT_MSG_ADAPTER
from mini_codex.protocol.items import RESPONSE_ITEM_ADAPTER
from mini_codex.rollout.checkpoint import (
    CHECKPOINT_KEY,
    CheckpointMeta,
    WindowInfo,
    parse_checkpoint_meta,
    uuid_v7,
)
from mini_codex.rollout.lines import (
    DECODE_ERRORS,
    GHOST_SNAPSHOT,
    ReadStats,
    Skip,
    drop_ghost_snapshots,
    normalize_envelope,
)

INTER_AGENT_COMMUNICATION = "inter_agent_communication"

CONTEXTUAL_USER_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<workspace_files>",
)
"""Lower-case starts of user-role fragments that are context, not user input (Codex's and ours)."""

_CONTEXT_ROLES = frozenset({"user", "developer", "system"})

# --- entries --------------------------------------------------------------------------------------


@dataclass(slots=True)
class SessionMetaEntry:
    meta: SessionMeta


@dataclass(slots=True)
class ItemEntry:
    """A response item; ``item`` is set for typed input, ``payload`` for lazily validated input."""

    payload: Mapping[str, Any] | None
    item: ResponseItem | None
    boundary: bool
    """A user-turn boundary (user input or an inter-agent instruction)."""
    closer: bool
    """Model or tool output: older than a legacy segment's user input, it ends the previous turn."""

    def materialize(self) -> ResponseItem:
        """The validated item (raises ``pydantic.ValidationError`` for a malformed payload)."""
        if self.item is not None:
            return self.item
        return RESPONSE_ITEM_ADAPTER.validate_python(self.payload)


@dataclass(slots=True)
class InterAgentEntry:
    """An ``inter_agent_communication`` line (its payload is the communication)."""

    payload: Mapping[str, Any]

    def model_item(self) -> Message:
        """The model-input item: an assistant commentary message carrying the serialized JSON."""
        text = orjson.dumps(self.payload).decode()
        return Message(role="assistant", content=[OutputText(text=text)], phase="commentary")


@dataclass(slots=True)
class TurnContextEntry:
    context: TurnContextItem


@dataclass(slots=True)
class WorldStateEntry:
    full: bool
    state: JsonObject


@dataclass(slots=True)
class CompactedEntry:
    message: str
    history: tuple[ResponseItem, ...] | None
    """The replacement history when it came typed."""
    raw_history: Sequence[Any] | None
    """The replacement history still to validate (parsed JSON input)."""
    window: WindowInfo | None
    """Set when the compaction carries a window number."""
    is_checkpoint: bool
    """The line carries a ``mini_codex_checkpoint`` field (even a malformed one)."""
    checkpoint: CheckpointMeta | None = field(default=None)

    @property
    def has_history(self) -> bool:
        return self.history is not None or self.raw_history is not None

    def materialize_history(self) -> tuple[list[ResponseItem], int]:
        """The replacement history and the number of items that failed to validate."""
        if self.history is not None:
            return list(self.history), 0
        items: list[ResponseItem] = []
        failed = 0
        for raw in self.raw_history or ():
            try:
                items.append(RESPONSE_ITEM_ADAPTER.validate_python(raw))
            except DECODE_ERRORS:
                failed += 1
        return items, failed


@dataclass(slots=True)
class TurnStartedEntry:
    turn_id: str | None


@dataclass(slots=True)
class TurnCompleteEntry:
    turn_id: str | None


@dataclass(slots=True)
class TurnAbortedEntry:
    turn_id: str | None


@dataclass(slots=True)
class UserMessageEntry:
    pass


@dataclass(slots=True)
class RolledBackEntry:
    num_turns: int


Entry: TypeAlias = (
    SessionMetaEntry
    | ItemEntry
    | InterAgentEntry
    | TurnContextEntry
    | WorldStateEntry
    | CompactedEntry
    | TurnStartedEntry
    | TurnCompleteEntry
    | TurnAbortedEntry
    | UserMessageEntry
    | RolledBackEntry
)
"""What replay sees of one line; lines replay ignores have no entry."""

# --- boundaries -----------------------------------------------------------------------------------


def is_contextual_text(text: str) -> bool:
    head = text.lstrip()[:32].lower()
    return head.startswith(CONTEXTUAL_USER_PREFIXES)


def is_inter_agent_text(text: str) -> bool:
    """Is ``text`` a serialized inter-agent instruction (``{author, recipient, content, ...}``)?"""
    if not text.startswith("{"):
        return False
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(value, dict):
        return False
    others = value.get("other_recipients", [])
    return (
        isinstance(value.get("author"), str)
        and isinstance(value.get("recipient"), str)
        and isinstance(value.get("content"), str)
        and isinstance(value.get("trigger_turn"), bool)
        and isinstance(others, list)
        and all(isinstance(other, str) for other in others)
    )


def _boundary(role: str, parts: Sequence[tuple[str, str | None]]) -> bool:
    if role == "user":
        return not any(
            kind == "input_text" and text is not None and is_contextual_text(text)
            for kind, text in parts
        )
    if role == "assistant" and len(parts) == 1:
        kind, text = parts[0]
        return kind == "output_text" and text is not None and is_inter_agent_text(text)
    return False


def is_user_turn_boundary(item: ResponseItem) -> bool:
    """Does ``item`` start a user turn (for rollback and legacy turn segmentation)?"""
    if not isinstance(item, Message):
        return False
    parts = [
        (part.type, part.text if isinstance(part, InputText | OutputText) else None)
        for part in item.content
    ]
    return _boundary(item.role, parts)


def _typed_item_entry(item: ResponseItem) -> ItemEntry | None:
    if isinstance(item, UnknownItem) and item.type == GHOST_SNAPSHOT:
        return None
    boundary = is_user_turn_boundary(item)
    context = isinstance(item, Message) and item.role in _CONTEXT_ROLES
    return ItemEntry(None, item, boundary, closer=not (boundary or context))


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
    boundary = _boundary(role, parts)
    return ItemEntry(payload, None, boundary, not (boundary or role in _CONTEXT_ROLES))


# --- compactions ----------------------------------------------------------------------------------


def _window(item: CompactedItem) -> WindowInfo | None:
    number = item.window_number
    current: object = item.window_id
    if number is None and isinstance(current, int) and not isinstance(current, bool):
        # Legacy: a numeric window_id is the window number.
        number, current = current, None
    if number is None:
        return None
    return WindowInfo(
        number, uuid_v7(item.first_window_id), uuid_v7(item.previous_window_id), uuid_v7(current)
    )


def _compacted_entry(
    item: CompactedItem, history: tuple[ResponseItem, ...] | None, raw: Sequence[Any] | None
) -> CompactedEntry:
    extra = item.model_extra or {}
    is_checkpoint = CHECKPOINT_KEY in extra
    meta = parse_checkpoint_meta(extra.get(CHECKPOINT_KEY)) if is_checkpoint else None
    return CompactedEntry(item.message, history, raw, _window(item), is_checkpoint, meta)


def _typed_compacted(item: CompactedItem) -> CompactedEntry:
    history = item.replacement_history
    if history is None:
        return _compacted_entry(item, None, None)
    kept = tuple(
        entry
        for entry in history
        if not (isinstance(entry, UnknownItem) and entry.type == GHOST_SNAPSHOT)
    )
    return _compacted_entry(item, kept, None)


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
    return _compacted_entry(item, None, history)


# --- building entries -----------------------------------------------------------------------------


def entry_from_line(line: RolloutLine) -> Entry | None:
    """The replay view of a typed line (None for lines replay ignores)."""
    match line:
        case SessionMetaLine():
            return SessionMetaEntry(line.payload)
        case ResponseItemLine():
            return _typed_item_entry(line.payload)
        case TurnContextLine():
            return TurnContextEntry(line.payload)
        case WorldStateLine():
            return WorldStateEntry(line.payload.full, line.payload.state)
        case CompactedLine():
            return _typed_compacted(line.payload)
        case EventMsgLine():
            return _event_entry(line.payload)
        case UnknownLine():
            if line.type == INTER_AGENT_COMMUNICATION and isinstance(line.payload, dict):
                return InterAgentEntry(line.payload)
            return None
        case _:
            assert_never(line)


def _event_entry(event: object) -> Entry | None:
    match event:
        case TaskStarted():
            return TurnStartedEntry(event.turn_id)
        case TaskComplete():
            return TurnCompleteEntry(event.turn_id)
        case TurnAborted():
            return TurnAbortedEntry(event.turn_id)
        case UserMessageEvent():
            return UserMessageEntry()
        case ThreadRolledBack():
            return RolledBackEntry(max(event.num_turns, 0))
        case _:
            return None


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
        return _event_entry(EVENT_MSG_ADAPTER.validate_python(payload))
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
