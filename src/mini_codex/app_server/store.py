"""Recorded threads on disk: find, list (paged), archive, unarchive, name, fork.

Threads are the rollouts under ``HOME/sessions`` (listed through the SQLite session index,
``rollout/index.py``); archived ones live under ``HOME/archived_sessions`` (Codex's layout). A
Codex CLI thread (under ``CODEX_HOME``) is found too and copied into ``HOME`` before it is resumed
(the Codex file is never written). Names set with ``thread/name/set`` are kept in
``HOME/thread_names.json``. A fork is a copy of the source rollout whose ``session_meta`` gets a
new id (and ``forked_from_id``): resuming the copy replays the same history into a new thread.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from mini_codex.errors import MiniCodexError
from mini_codex.rollout.index import SessionIndex, SessionInfo

__all__ = ["Page", "ThreadStore"]

ARCHIVED = "archived_sessions"
NAMES = "thread_names.json"


@dataclass(frozen=True)
class Page:
    infos: list[SessionInfo]
    next_cursor: str | None


def _day_folder(root: Path) -> Path:
    day = datetime.now().astimezone()
    return root / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"


class ThreadStore:
    def __init__(self, home: Path, codex_home: Path) -> None:
        self.home = home
        self.codex_home = codex_home

    def _index(self, home: Path, subdir: str = "sessions") -> SessionIndex | None:
        if not (home / subdir).is_dir():
            return None
        db = home / f"{subdir}_index.sqlite" if subdir != "sessions" else None
        index = SessionIndex(home, db_path=db, subdir=subdir)
        index.refresh()
        return index

    def _find_in(self, home: Path, thread_id: str, subdir: str = "sessions") -> Path | None:
        index = self._index(home, subdir)
        if index is None:
            return None
        with index:
            found = [info for info in index.find(thread_id) if info.id == thread_id]
        return found[0].path if found else None

    def find(self, thread_id: str) -> Path:
        """The rollout of ``thread_id`` (ours, else the Codex CLI's copied into ``home``)."""
        path = self._find_in(self.home, thread_id)
        if path is not None:
            return path
        codex = self._find_in(self.codex_home, thread_id)
        if codex is not None:
            return self._import(codex)
        if self._find_in(self.home, thread_id, ARCHIVED) is not None:
            raise MiniCodexError(f"thread {thread_id} is archived (thread/unarchive restores it)")
        raise MiniCodexError(f"no thread {thread_id}")

    def _import(self, source: Path) -> Path:
        target = _day_folder(self.home / "sessions") / source.name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return target

    def list(self, *, archived: bool, cursor: str | None, limit: int) -> Page:
        """One page, most recently updated first; the cursor is the offset of the next page."""
        try:
            offset = int(cursor) if cursor else 0
        except ValueError:
            raise MiniCodexError(f"invalid cursor {cursor!r}") from None
        index = self._index(self.home, ARCHIVED if archived else "sessions")
        if index is None:
            return Page([], None)
        with index:
            infos = [info for info in index.list() if info.error is None]
        page = infos[offset : offset + limit]
        more = offset + limit < len(infos)
        return Page(page, str(offset + limit) if more else None)

    def info(self, path: Path) -> SessionInfo | None:
        for subdir in ("sessions", ARCHIVED):
            index = self._index(self.home, subdir)
            if index is None:
                continue
            with index:
                for info in index.list():
                    if info.path == path:
                        return info
        return None

    def archive(self, thread_id: str) -> Path:
        source = self.find(thread_id)
        target = self.home / ARCHIVED / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        return target

    def unarchive(self, thread_id: str) -> Path:
        source = self._find_in(self.home, thread_id, ARCHIVED)
        if source is None:
            raise MiniCodexError(f"no archived thread {thread_id}")
        target = _day_folder(self.home / "sessions") / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        return target

    # --- names -----------------------------------------------------------------------------------

    def names(self) -> dict[str, str]:
        try:
            value = json.loads((self.home / NAMES).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def set_name(self, thread_id: str, name: str) -> None:
        names = self.names()
        names[thread_id] = name
        path = self.home / NAMES
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(names, indent=1), encoding="utf-8")
        os.replace(temporary, path)

    # --- fork ------------------------------------------------------------------------------------

    def fork(self, source: Path) -> tuple[Path, str]:
        """A copy of ``source`` under a new thread id; returns (path, new id)."""
        new_id = str(uuid.uuid4())
        with source.open("rb") as handle:
            first = handle.readline()
            rest = handle.read()
        try:
            line = orjson.loads(first)
            payload = line["payload"]
            old_id = payload["id"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise MiniCodexError(f"{source}: the first line is not a session_meta") from None
        payload["id"] = new_id
        if payload.get("session_id") == old_id:
            payload["session_id"] = new_id
        payload["forked_from_id"] = old_id
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S")
        target = _day_folder(self.home / "sessions") / f"rollout-{stamp}-{new_id}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(orjson.dumps(line) + b"\n" + rest)
        return target, new_id
