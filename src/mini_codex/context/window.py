"""What a reconstruction yields besides history: the previous turn's settings and the context
window's identity (spec §6.4).

Small frozen values (pure). They live outside ``rollout/replay/`` because a new session needs them
too (its turn state starts a window) without importing the replay fold; ``replay.checkpoint``
re-exports both, as it reads and writes them in checkpoint payloads.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["PreviousTurnSettings", "WindowInfo"]


class PreviousTurnSettings(msgspec.Struct, frozen=True):
    """Settings of the newest surviving user turn (from its ``turn_context``)."""

    model: str | None
    comp_hash: str | None
    realtime_active: bool | None

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "comp_hash": self.comp_hash,
            "realtime_active": self.realtime_active,
        }


class WindowInfo(msgspec.Struct, frozen=True):
    """Context-window identity (spec §6.4). IDs are UUID v7 strings, or None."""

    number: int
    first_id: str | None = None
    previous_id: str | None = None
    current_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "first_id": self.first_id,
            "previous_id": self.previous_id,
            "current_id": self.current_id,
        }
