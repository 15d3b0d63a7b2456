"""The composer's prompt history, persisted as ``$MINI_CODEX_HOME/history.jsonl``.

One JSON object a line: ``{"ts": <unix seconds>, "text": "..."}``. Unreadable lines are skipped;
an unwritable file never stops the UI (the entry stays in memory).
"""

from __future__ import annotations

import time
from pathlib import Path

import orjson

MAX_ENTRIES = 1000


class PromptHistory:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = []
        self._cursor: int | None = None
        if path is not None:
            self.entries = _load(path)[-MAX_ENTRIES:]

    def add(self, text: str) -> None:
        self._cursor = None
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        if self.path is None:
            return
        line = orjson.dumps({"ts": int(time.time()), "text": text}) + b"\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as handle:
                handle.write(line)
        except OSError:
            pass

    def previous(self) -> str | None:
        """One entry older than the last recalled (None when there is none)."""
        if not self.entries:
            return None
        cursor = len(self.entries) if self._cursor is None else self._cursor
        if cursor == 0:
            return None
        self._cursor = cursor - 1
        return self.entries[self._cursor]

    def next(self) -> str | None:
        """One entry newer; "" past the newest (back to an empty composer)."""
        if self._cursor is None:
            return None
        self._cursor += 1
        if self._cursor >= len(self.entries):
            self._cursor = None
            return ""
        return self.entries[self._cursor]

    def reset(self) -> None:
        self._cursor = None


def _load(path: Path) -> list[str]:
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    entries: list[str] = []
    for line in raw.splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            entries.append(value["text"])
    return entries
