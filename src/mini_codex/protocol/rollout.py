"""Rollout lines: ``{"timestamp": "...Z", "type": <kind>, "payload": {...}}`` (Codex's shape).

Kinds modelled here: ``session_meta``, ``response_item``, ``turn_context``, ``world_state``,
``compacted`` and ``event_msg``. Any other kind decodes to ``UnknownLine`` and is kept verbatim.
Extra top-level keys (``ordinal``, ``metadata``) are preserved.

``MINI_CODEX_SCHEMA`` is the version we write into ``session_meta.mini_codex_schema``; readers
refuse newer versions. Every version ever written has a summary in ``SCHEMA_VERSION_SUMMARIES``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Tag, TypeAdapter

from mini_codex.protocol._base import WireModel
from mini_codex.protocol.events import EventMsg
from mini_codex.protocol.items import ResponseItem

MINI_CODEX_SCHEMA = 1

SCHEMA_VERSION_SUMMARIES: dict[int, str] = {
    1: "Codex line shape; world_state {full, state}; checkpoints as compacted with an empty "
    "message and a full replacement_history, followed by a full world_state.",
}

if max(SCHEMA_VERSION_SUMMARIES) != MINI_CODEX_SCHEMA:  # pragma: no cover - developer error
    raise RuntimeError("MINI_CODEX_SCHEMA has no entry in SCHEMA_VERSION_SUMMARIES")


class ContextWindowRef(WireModel):
    window_id: str | None = None


class SessionMeta(WireModel):
    """``session_meta`` payload (Codex's SessionMeta fields flattened, plus ours)."""

    id: str
    session_id: str | None = None
    timestamp: str | None = None
    cwd: str | None = None
    originator: str | None = None
    cli_version: str | None = None
    model_provider: str | None = None
    context_window: ContextWindowRef | None = None
    mini_codex_schema: int | None = None
    environments: list[dict[str, str]] | None = None
    """The thread's environment selections (``{environment_id, cwd}`` each, in order), written
    when the session has executors; a resume restores them (issue 26)."""

    @property
    def thread_id(self) -> str:
        return self.session_id or self.id


class TurnContextItem(WireModel):
    """``turn_context`` payload: the persisted settings baseline of a turn."""

    turn_id: str | None = None
    cwd: str | None = None
    current_date: str | None = None
    timezone: str | None = None
    approval_policy: Any = None
    sandbox_policy: Any = None
    model: str | None = None
    comp_hash: str | None = None
    realtime_active: bool | None = None
    effort: str | None = None
    summary: Any = None


class WorldStateItem(WireModel):
    """``world_state`` payload: a full snapshot or an RFC 7396 merge patch (an object)."""

    full: bool
    state: dict[str, Any]


class CompactedItem(WireModel):
    """``compacted`` payload. A missing ``replacement_history`` is a legacy compaction.

    Legacy: ``window_id`` may be a number, which means ``window_number``.
    """

    message: str = ""
    replacement_history: list[ResponseItem] | None = None
    window_number: int | None = None
    first_window_id: str | None = None
    previous_window_id: str | None = None
    window_id: str | int | None = None


class _Line(WireModel):
    timestamp: str | None = None


class SessionMetaLine(_Line):
    type: Literal["session_meta"] = "session_meta"
    payload: SessionMeta


class ResponseItemLine(_Line):
    type: Literal["response_item"] = "response_item"
    payload: ResponseItem


class TurnContextLine(_Line):
    type: Literal["turn_context"] = "turn_context"
    payload: TurnContextItem


class WorldStateLine(_Line):
    type: Literal["world_state"] = "world_state"
    payload: WorldStateItem


class CompactedLine(_Line):
    type: Literal["compacted"] = "compacted"
    payload: CompactedItem


class EventMsgLine(_Line):
    type: Literal["event_msg"] = "event_msg"
    payload: EventMsg


class UnknownLine(_Line):
    """A line of a kind this version does not model (``token_usage_record``, ...)."""

    type: str
    payload: Any = None


_LINE_TAGS = frozenset(
    {"session_meta", "response_item", "turn_context", "world_state", "compacted", "event_msg"}
)


def _line_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in _LINE_TAGS else "unknown"


RolloutLine: TypeAlias = Annotated[
    Annotated[SessionMetaLine, Tag("session_meta")]
    | Annotated[ResponseItemLine, Tag("response_item")]
    | Annotated[TurnContextLine, Tag("turn_context")]
    | Annotated[WorldStateLine, Tag("world_state")]
    | Annotated[CompactedLine, Tag("compacted")]
    | Annotated[EventMsgLine, Tag("event_msg")]
    | Annotated[UnknownLine, Tag("unknown")],
    Discriminator(_line_tag),
]

ROLLOUT_LINE_ADAPTER: TypeAdapter[RolloutLine] = TypeAdapter(RolloutLine)

RolloutPayload: TypeAlias = (
    SessionMeta | ResponseItem | TurnContextItem | WorldStateItem | CompactedItem | EventMsg
)


def format_timestamp(moment: datetime) -> str:
    """UTC, millisecond precision, literal ``Z``: ``2026-08-22T00:42:19.123Z``."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
