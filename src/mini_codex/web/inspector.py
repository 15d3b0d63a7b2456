"""The inspector's data: sessions, a session's timeline, a step's world state and request.

What belongs here: the JSON documents the API serves and the HTML export embeds, built from the
session index (``rollout.index``, its public API only) and the rollout files (read-only, through
``source.py`` and the replay core). What does not: HTTP, auth (``app.py``, ``auth.py``).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_codex.errors import MiniCodexError
from mini_codex.protocol import SessionMetaLine
from mini_codex.rollout.index import SessionIndex, SessionInfo
from mini_codex.rollout.paths import ROLLOUT_SUFFIXES, parse_rollout_filename
from mini_codex.rollout.reader import ZSTD_SUFFIX
from mini_codex.web.bounded import cut_document
from mini_codex.web.diff import diff_states
from mini_codex.web.request import build_request
from mini_codex.web.session_view import build_view
from mini_codex.web.source import (
    WHOLE_FILE_BYTES,
    Window,
    first_model,
    line_start,
    read_first_line,
    read_window,
    read_window_at,
)
from mini_codex.web.view_model import SessionView, StepView

__all__ = ["BadRequest", "Inspector", "NotFound", "load_file_view", "parse_offset"]

CACHE_BYTES = 64 * 1024 * 1024
"""The windows kept decoded, counted in file bytes (the oldest go first)."""
MAX_DIGITS = 19
"""Offsets and step ids: at most this many ASCII digits (a file is smaller than 10**19 bytes)."""
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
"""A session id as asked for: letters, digits, ``.``, ``_``, ``-`` (no glob metacharacters)."""


class NotFound(MiniCodexError):
    """No such session or step."""


class BadRequest(MiniCodexError):
    """A malformed id, offset or number in a request (answered 400)."""


def parse_offset(text: str, what: str) -> int:
    """A byte offset from a request: ASCII digits only, at most :data:`MAX_DIGITS` of them."""
    if not (0 < len(text) <= MAX_DIGITS) or not text.isascii() or not text.isdigit():
        raise BadRequest(f"{what}: expected up to {MAX_DIGITS} ASCII digits")
    return int(text)


def check_session_id(session_id: str) -> str:
    if not _SESSION_ID.fullmatch(session_id):
        raise BadRequest("session id: letters, digits, '.', '_' and '-' only (up to 200)")
    return session_id


@dataclass(frozen=True)
class Loaded:
    window: Window
    view: SessionView


def load_file_view(
    path: Path,
    before: int | None = None,
    at: int | None = None,
    *,
    whole_limit: int = WHOLE_FILE_BYTES,
) -> Loaded:
    """The window ending at ``before`` (default: the newest), or the one holding offset ``at``."""
    if at is not None:
        window = read_window_at(path, at, whole_limit=whole_limit)
    else:
        window = read_window(path, before, whole_limit=whole_limit)
    view = build_view(window.lines, window.refs, continued=window.start > 0)
    view.warnings[:0] = list(window.warnings)
    if view.meta is None and window.start > 0:
        first = read_first_line(path)
        if isinstance(first, SessionMetaLine):
            view.meta = first.payload.to_json()
    return Loaded(window, view)


class Inspector:
    """Read-only access to the sessions under ``home / subdir`` (the index lives at ``db_path``).

    ``subdir`` is ``rollouts`` for a batch destination; ``urls`` maps local rollout paths to the
    remote URLs they mirror (a remote batch), shown as the sessions' paths.
    """

    def __init__(
        self,
        home: Path,
        db_path: Path | None = None,
        *,
        whole_limit: int = WHOLE_FILE_BYTES,
        subdir: str = "sessions",
        urls: Mapping[str, str] | None = None,
    ) -> None:
        self.home = home
        self.db_path = db_path
        self.subdir = subdir
        self.urls = dict(urls or {})
        self.whole_limit = whole_limit
        """Files up to this many bytes are read whole; larger ones in checkpoint windows."""
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[Any, ...], Loaded] = OrderedDict()
        self._cached_bytes = 0
        self._models: dict[tuple[str, int, int], str | None] = {}

    def _index(self) -> SessionIndex:
        return SessionIndex(self.home, db_path=self.db_path, subdir=self.subdir)

    # --- sessions --------------------------------------------------------------------------------

    def sessions(self) -> list[dict[str, Any]]:
        with self._lock, self._index() as index:
            index.refresh()
            infos = index.list()
        listed = [{**_session_json(info), "model": self._model_of(info)} for info in infos]
        for entry in listed:
            entry["path"] = self.urls.get(entry["path"], entry["path"])
        return listed

    def _model_of(self, info: SessionInfo) -> str | None:
        key = (str(info.path), info.size, info.mtime_ns)
        with self._lock:
            if key in self._models:
                return self._models[key]
        model = first_model(info.path) if info.error is None else None
        with self._lock:
            self._models[key] = model
        return model

    def path_of(self, session_id: str) -> Path:
        """The rollout of ``session_id``: from the index, else from a file named after it
        (without indexing: opening a session must not wait for the index to read big files),
        else from a refreshed index."""
        check_session_id(session_id)
        with self._lock, self._index() as index:
            found = [info.path for info in index.find(session_id) if info.id == session_id]
        found = [path for path in found if path.is_file()] or _named(
            self.home / self.subdir, session_id
        )
        if not found:
            with self._lock, self._index() as index:
                index.refresh()
                found = [info.path for info in index.find(session_id) if info.id == session_id]
        if not found:
            raise NotFound(f"no session {session_id}")
        return found[0]

    # --- one session -----------------------------------------------------------------------------

    def load(self, path: Path, before: int | None = None, at: int | None = None) -> Loaded:
        """The window ending at ``before`` or holding offset ``at``, from a cache keyed on the
        offsets clamped to the file (so offsets past the end are one entry) and bounded in bytes."""
        stat = path.stat()
        size = stat.st_size
        if at is not None and at >= size:
            raise NotFound(f"no line at offset {at} (the file has {size} bytes)")
        if before is not None and (before >= size or size <= self.whole_limit):
            before = None  # the newest window
        key = (str(path), before, at, size, stat.st_mtime_ns)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        loaded = load_file_view(path, before, at, whole_limit=self.whole_limit)
        cost = max(loaded.window.end - loaded.window.start, 1)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = loaded
                self._cached_bytes += cost
            while self._cached_bytes > CACHE_BYTES and len(self._cache) > 1:
                _, old = self._cache.popitem(last=False)
                self._cached_bytes -= max(old.window.end - old.window.start, 1)
        return loaded

    def session(self, session_id: str, before: int | None = None) -> dict[str, Any]:
        path = self.path_of(session_id)
        document = session_document(session_id, path, self.load(path, before))
        document["path"] = self.urls.get(str(path), str(path))
        document.update(self._family(session_id))
        return document

    def _family(self, session_id: str) -> dict[str, Any]:
        """The session's parent and children (sub-agents), from the index."""
        with self._lock, self._index() as index:
            infos = index.list()
        own = next((info for info in infos if info.id == session_id), None)
        children = [
            {"id": info.id, "agent_nickname": info.agent_nickname, "first_prompt":
             info.first_user_message}
            for info in sorted(infos, key=lambda i: i.created or "")
            if info.parent_thread_id == session_id and info.id != session_id
        ]  # fmt: skip
        parent = own.parent_thread_id if own is not None else None
        nickname = own.agent_nickname if own is not None else None
        return {"parent_thread_id": parent, "agent_nickname": nickname, "children": children}

    def step_world_state(self, session_id: str, step_id: str) -> dict[str, Any]:
        path = self.path_of(session_id)
        return world_state_document(self._step(path, step_id)[1])

    def step_request(self, session_id: str, step_id: str) -> dict[str, Any]:
        path = self.path_of(session_id)
        loaded, step = self._step(path, step_id)
        return request_document(loaded, step)

    def line_range(self, session_id: str, offset: int) -> tuple[Path, int, int]:
        """The file and byte range of the whole line at ``offset`` (a plain file's line start)."""
        path = self.path_of(session_id)
        if path.name.endswith(ZSTD_SUFFIX):
            raise BadRequest("lines of a compressed rollout are not served")
        size = path.stat().st_size
        if offset >= size or not line_start(path, offset):
            raise NotFound(f"no line starts at offset {offset}")
        return path, offset, size

    def _step(self, path: Path, step_id: str) -> tuple[Loaded, StepView]:
        if not step_id.startswith("o"):
            raise BadRequest("step id: expected o<offset>")
        offset = parse_offset(step_id[1:], "step id")
        loaded = self.load(path, at=offset)
        step = loaded.view.steps.get(step_id)
        if step is None:
            raise NotFound(f"no step {step_id}")
        return loaded, step


def _named(sessions: Path, session_id: str) -> list[Path]:
    if not sessions.is_dir():
        return []
    return [
        path
        for suffix in ROLLOUT_SUFFIXES
        for path in sessions.rglob(f"rollout-*-{session_id}{suffix}")
        if (parsed := parse_rollout_filename(path.name)) is not None
        and parsed.thread_id == session_id
    ]


def session_document(session_id: str, path: Path, loaded: Loaded) -> dict[str, Any]:
    window = loaded.window
    document = loaded.view.to_json()
    tokens = [
        {
            "step_id": step.step_id,
            "total_tokens": (step.token_usage or {}).get("total_tokens"),
            "input_tokens": (step.token_usage or {}).get("input_tokens"),
        }
        for step in loaded.view.steps.values()
    ]
    document.update(
        id=session_id,
        path=str(path),
        page={
            "start": window.start,
            "end": window.end,
            "previous": window.previous,
            "size": window.size,
            "whole_file": window.whole,
        },
        tokens=tokens,
        stats={
            "lines": window.stats.lines,
            "bad_lines": window.stats.bad_lines,
            "unknown_items": window.stats.unknown_items,
        },
        long_lines=[
            {"offset": long.offset, "line": long.line, "bytes": long.bytes}
            for long in window.long_lines
        ],
    )
    return cut_document(document)


def world_state_document(step: StepView) -> dict[str, Any]:
    return cut_document(
        {
            "step_id": step.step_id,
            "world_state": step.world_state,
            "previous": step.previous_world_state,
            "diff": diff_states(step.previous_world_state, step.world_state),
        }
    )


def request_document(loaded: Loaded, step: StepView) -> dict[str, Any]:
    lines = loaded.window.lines[: step.request_index]
    return cut_document(
        {"step_id": step.step_id, **build_request(lines, step.world_state, step.model)}
    )


def _session_json(info: SessionInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "path": str(info.path),
        "cwd": info.cwd,
        "started": info.created,
        "updated": info.updated,
        "first_prompt": info.first_user_message,
        "turns": info.turn_count,
        "size": info.size,
        "error": info.error,
        "parent_thread_id": info.parent_thread_id,
        "agent_nickname": info.agent_nickname,
    }
