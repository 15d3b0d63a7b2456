"""The replay view of a rollout line: a small tagged union with lazily validated items (pure).

What belongs here: :data:`Entry`, the facts the reconstruction fold needs from one line (kind,
turn ids, "is this a user-turn boundary", world-state payloads, compaction windows), built from a
typed line by :func:`entry_from_line`, and the user-turn boundary rules. What does not: building
entries straight from parsed JSON (``classify.py``), the fold (``reconstruct.py``), file I/O.

Why a separate view: validating every line with pydantic costs several times the JSON parse, and
replay needs the full models only for what ends up in its result (and then only when someone
reads it): an :class:`ItemEntry` holds an item source (``history.ItemSource``: raw JSON or line
text proven valid, or a typed item), a :class:`TurnContextEntry` the fields the fold reads, and a
:class:`CompactedEntry` may hold a raw replacement history that the fold validates when it adopts
it.

User-turn boundaries (spec §6.1): an ordinary user message (role ``user`` and no contextual
fragment such as ``<environment_context>`` or ``# AGENTS.md instructions``), an assistant message
whose only part is a serialized inter-agent instruction, and an ``inter_agent_communication`` line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, assert_never

import orjson

from mini_codex.context.contextual import is_contextual_user_parts
from mini_codex.jsonmerge import JsonObject
from mini_codex.protocol import (
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
    TurnAborted,
    TurnContextItem,
    TurnContextLine,
    UnknownItem,
    UnknownLine,
    UserMessageEvent,
    WorldStateLine,
)
from mini_codex.rollout.replay.checkpoint import (
    CHECKPOINT_KEY,
    CheckpointMeta,
    WindowInfo,
    parse_checkpoint_meta,
    uuid_v7,
)
from mini_codex.rollout.replay.history import ItemSource
from mini_codex.rollout.replay.lines import GHOST_SNAPSHOT

INTER_AGENT_COMMUNICATION = "inter_agent_communication"

CONTEXT_ROLES = frozenset({"user", "developer", "system"})

# --- entries --------------------------------------------------------------------------------------


@dataclass(slots=True)
class SessionMetaEntry:
    meta: SessionMeta


@dataclass(slots=True)
class ItemEntry:
    """A response item, as a :data:`~mini_codex.rollout.replay.history.ItemSource` proven valid."""

    source: ItemSource | None
    """None: the item passed the shape check but does not validate (a bad line if it survives)."""
    boundary: bool
    """A user-turn boundary (user input or an inter-agent instruction)."""
    closer: bool
    """Model or tool output: older than a legacy segment's user input, it ends the previous turn."""


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
    """A turn context: the fields the fold reads, and the item built only when it is kept."""

    source: TurnContextItem | dict[str, Any] | bytes
    """The typed item, or its payload proven valid (it validates without coercion), or the
    whole rollout line of such a payload."""
    turn_id: str | None
    model: str | None
    comp_hash: str | None
    realtime_active: bool | None

    @classmethod
    def of(cls, context: TurnContextItem) -> TurnContextEntry:
        return cls(
            context, context.turn_id, context.model, context.comp_hash, context.realtime_active
        )

    def context(self) -> TurnContextItem:
        source = self.source
        if type(source) is bytes:
            return TurnContextItem.model_validate(orjson.loads(source)["payload"])
        if type(source) is dict:
            return TurnContextItem.model_validate(source)
        return source  # type: ignore[return-value]


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


def boundary_of(role: str, parts: Sequence[tuple[str, str | None]]) -> bool:
    if role == "user":
        return not is_contextual_user_parts(parts)
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
    return boundary_of(item.role, parts)


def _typed_item_entry(item: ResponseItem) -> ItemEntry | None:
    if isinstance(item, UnknownItem) and item.type == GHOST_SNAPSHOT:
        return None
    boundary = is_user_turn_boundary(item)
    context = isinstance(item, Message) and item.role in CONTEXT_ROLES
    return ItemEntry(item, boundary, closer=not (boundary or context))


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


def compacted_entry(
    item: CompactedItem, history: tuple[ResponseItem, ...] | None, raw: Sequence[Any] | None
) -> CompactedEntry:
    extra = item.model_extra or {}
    is_checkpoint = CHECKPOINT_KEY in extra
    meta = parse_checkpoint_meta(extra.get(CHECKPOINT_KEY)) if is_checkpoint else None
    return CompactedEntry(item.message, history, raw, _window(item), is_checkpoint, meta)


def _typed_compacted(item: CompactedItem) -> CompactedEntry:
    history = item.replacement_history
    if history is None:
        return compacted_entry(item, None, None)
    kept = tuple(
        entry
        for entry in history
        if not (isinstance(entry, UnknownItem) and entry.type == GHOST_SNAPSHOT)
    )
    return compacted_entry(item, kept, None)


# --- building entries -----------------------------------------------------------------------------


def entry_from_line(line: RolloutLine) -> Entry | None:
    """The replay view of a typed line (None for lines replay ignores)."""
    match line:
        case SessionMetaLine():
            return SessionMetaEntry(line.payload)
        case ResponseItemLine():
            return _typed_item_entry(line.payload)
        case TurnContextLine():
            return TurnContextEntry.of(line.payload)
        case WorldStateLine():
            return WorldStateEntry(line.payload.full, line.payload.state)
        case CompactedLine():
            return _typed_compacted(line.payload)
        case EventMsgLine():
            return event_entry(line.payload)
        case UnknownLine():
            if line.type == INTER_AGENT_COMMUNICATION and isinstance(line.payload, dict):
                return InterAgentEntry(line.payload)
            return None
        case _:
            assert_never(line)


def event_entry(event: object) -> Entry | None:
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
