"""Recent sessions for the resume picker, from the rollout index (newest first)."""

from __future__ import annotations

from pathlib import Path

from mini_codex.errors import MiniCodexError
from mini_codex.rollout.index import SessionIndex, SessionInfo

PICKER_LIMIT = 30


def recent_sessions(home: Path, limit: int = PICKER_LIMIT) -> list[SessionInfo]:
    try:
        with SessionIndex(home) as index:
            index.refresh()
            return [info for info in index.list(limit) if info.error is None]
    except (MiniCodexError, OSError):
        return []
