"""Replay metadata types and mini-codex checkpoints (pure; our extension of the Codex format).

What belongs here: the checkpoint contract shared by the
writer and the replay: :func:`checkpoint_payload` builds one, :func:`parse_checkpoint_meta` reads
one back. What does not: the replay fold itself (``fold.py``) and writing lines (the recorder).

A checkpoint is a ``compacted`` line with ``"message": ""``, the full current history as
``replacement_history`` and one extra field::

    "mini_codex_checkpoint": {
        "reference_context": <turn_context payload> | null,
        "previous_turn_settings": {"model", "comp_hash", "realtime_active"} | null,
        "window": {"number", "first_id", "previous_id", "current_id"}
    }

The writer follows it with a full ``world_state`` line when a baseline exists. Replay treats it as a
world-state reset and a history base like any compaction, but it is not a new context window and it
does not clear the reference context: reference, settings and window come from its payload, so a
resume reads the file back only to the newest surviving checkpoint. Codex readers see an ordinary
compaction with an empty summary. Write checkpoints between turns or between steps (after the
turn's user input and ``turn_context`` are recorded): the payload must equal the reconstruction of
the lines before it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mini_codex.context.window import PreviousTurnSettings as PreviousTurnSettings
from mini_codex.context.window import WindowInfo as WindowInfo
from mini_codex.protocol import CompactedItem, ResponseItem, TurnContextItem
from mini_codex.rollout.replay.lines import DECODE_ERRORS

CHECKPOINT_KEY = "mini_codex_checkpoint"
"""The extra ``compacted`` payload field that marks a mini-codex checkpoint."""


@dataclass(frozen=True, slots=True)
class CheckpointMeta:
    """The decoded ``mini_codex_checkpoint`` field of a checkpoint line."""

    reference_context: TurnContextItem | None
    previous_turn_settings: PreviousTurnSettings | None
    window: WindowInfo


def uuid_v7(value: object) -> str | None:
    """The canonical form of ``value`` if it is a UUID of version 7, else None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return None
    return str(parsed) if parsed.version == 7 else None


def checkpoint_payload(
    history: Iterable[ResponseItem],
    reference_context: TurnContextItem | None,
    previous_turn_settings: PreviousTurnSettings | None,
    window: WindowInfo,
) -> CompactedItem:
    """Build the ``compacted`` payload of a checkpoint carrying ``history`` as replacement."""
    meta: dict[str, Any] = {
        "reference_context": (
            reference_context.to_json() if reference_context is not None else None
        ),
        "previous_turn_settings": (
            previous_turn_settings.to_json() if previous_turn_settings is not None else None
        ),
        "window": window.to_json(),
    }
    return CompactedItem.model_validate(
        {"message": "", "replacement_history": list(history), CHECKPOINT_KEY: meta}
    )


def parse_checkpoint_meta(value: object) -> CheckpointMeta | None:
    """Decode a ``mini_codex_checkpoint`` value; None when it is malformed."""
    if not isinstance(value, Mapping):
        return None
    reference = value.get("reference_context")
    settings = value.get("previous_turn_settings")
    window = value.get("window")
    try:
        context = None if reference is None else TurnContextItem.model_validate(reference)
    except DECODE_ERRORS:
        return None
    try:
        parsed_settings = _parse_settings(settings)
    except ValueError:
        return None
    parsed_window = _parse_window(window)
    if parsed_window is None:
        return None
    return CheckpointMeta(context, parsed_settings, parsed_window)


def _parse_settings(value: object) -> PreviousTurnSettings | None:
    """Decoded settings, None for JSON null; ValueError when malformed."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError("previous_turn_settings is not an object")
    model = value.get("model")
    comp_hash = value.get("comp_hash")
    realtime = value.get("realtime_active")
    if not (_optional(model, str) and _optional(comp_hash, str) and _optional(realtime, bool)):
        raise ValueError("previous_turn_settings has a field of the wrong type")
    return PreviousTurnSettings(model, comp_hash, realtime)


def _parse_window(value: object) -> WindowInfo | None:
    if not isinstance(value, Mapping):
        return None
    number = value.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        return None
    ids = [value.get(key) for key in ("first_id", "previous_id", "current_id")]
    if not all(_optional(item, str) for item in ids):
        return None
    first, previous, current = (uuid_v7(item) for item in ids)
    return WindowInfo(number, first, previous, current)


def _optional(value: object, kind: type) -> bool:
    return value is None or isinstance(value, kind)
