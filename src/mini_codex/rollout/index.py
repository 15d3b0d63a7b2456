"""The session index: a SQLite cache listing the rollout files under a home directory.

What belongs here: scanning ``<home>/sessions/**/rollout-*.jsonl`` (and ``.jsonl.zst``), pulling a
few facts out of each file with one forward read (:func:`~mini_codex.rollout.reader.read_rollout`),
and keeping them in a stdlib ``sqlite3`` database in WAL mode so listing many sessions is cheap.
What does not: deciding which home to use (``cli/`` reads ``$MINI_CODEX_HOME``) and replay.

**It is a cache, never the source of truth.** :meth:`SessionIndex.refresh` re-reads a file only
when its ``(size, mtime_ns)`` changed or it has no row, and drops rows whose file is gone; deleting
the database and refreshing gives the same listing. Any SQLite error — at open or in any query,
such as a valid header over a corrupted page — is treated like a missing index, once per
``SessionIndex``: the file is moved aside (``index.sqlite.corrupt-N``) and rebuilt from the
session files, or, when it is busy or cannot be replaced, an index in memory is built for this run;
:attr:`SessionIndex.notices` gets one line saying so. A database of another index schema version
is rebuilt in place.

Codex homes (``~/.codex``) use the same ``sessions/YYYY/MM/DD/rollout-*.jsonl`` layout, so the index
lists Codex CLI sessions too; pass ``db_path`` to keep the database out of a home you do not own.

Facts per file: thread id (``session_meta``, else the file name), cwd (``session_meta``, else the
first ``turn_context``), created (``session_meta.timestamp``, else the first line's timestamp),
updated (the last line's timestamp), the first user message (the first user-turn boundary item,
else the first ``user_message`` event), and the number of turns: tasks (``task_started`` …) that
hold user input (a ``user_message`` event or a user-turn boundary item; a manual compaction is a
task without input, not a turn), or for files without task events (Codex 2025) ``user_message``
events, else user-turn boundary items.
A file that cannot be read still gets a row (id from its name, ``error`` set), so it is listed and
not re-read until it changes.
"""

from __future__ import annotations

import builtins
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from mini_codex.errors import RolloutError
from mini_codex.rollout.index_facts import SessionInfo, extract_facts
from mini_codex.rollout.paths import ROLLOUT_SUFFIXES

__all__ = ["INDEX_FILENAME", "RefreshResult", "SessionIndex", "SessionInfo"]

T = TypeVar("T")

INDEX_FILENAME = "index.sqlite"
_SCHEMA_VERSION = 3
"""2: a task without user input (a manual compaction) is not counted as a turn."""
_COLUMNS = (
    "id",
    "path",
    "cwd",
    "created",
    "updated",
    "first_user_message",
    "turn_count",
    "size",
    "mtime_ns",
    "error",
    "parent_thread_id",
    "agent_nickname",
)
_SCHEMA = """
CREATE TABLE sessions (
    id TEXT NOT NULL,
    path TEXT PRIMARY KEY,
    cwd TEXT,
    created TEXT,
    updated TEXT,
    first_user_message TEXT,
    turn_count INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    error TEXT,
    parent_thread_id TEXT,
    agent_nickname TEXT
);
CREATE INDEX sessions_id ON sessions (id);
CREATE INDEX sessions_updated ON sessions (updated);
"""
_ORDER = "ORDER BY updated IS NULL, updated DESC, created DESC, path"


@dataclass(frozen=True)
class RefreshResult:
    """What a refresh did."""

    added: int
    updated: int
    removed: int
    unchanged: int


class SessionIndex:
    """The session index of one home directory (see module docs). Not thread-safe."""

    def __init__(
        self, home: Path, *, db_path: Path | None = None, subdir: str = "sessions"
    ) -> None:
        self.home = home
        self.subdir = subdir
        """The folder under ``home`` holding the rollouts (``rollouts`` for a batch's DEST)."""
        self.db_path = db_path if db_path is not None else home / INDEX_FILENAME
        self.notices: builtins.list[str] = []
        """One line per recovery from a damaged database (the CLI prints them)."""
        self._recovered = False
        self._db = self._connect()

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # --- queries ---------------------------------------------------------------------------------

    def list(self, limit: int | None = None) -> builtins.list[SessionInfo]:
        """Sessions, most recently updated first."""
        return self._guarded(lambda: self._list(limit))

    def _list(self, limit: int | None) -> builtins.list[SessionInfo]:
        sql = f"SELECT {', '.join(_COLUMNS)} FROM sessions {_ORDER}"
        if limit is not None:
            return self._query(sql + " LIMIT ?", (limit,))
        return self._query(sql, ())

    def find(self, id_prefix: str) -> builtins.list[SessionInfo]:
        """Sessions whose id starts with ``id_prefix`` (case-insensitive), newest first."""
        return self._guarded(lambda: self._find(id_prefix))

    def _find(self, id_prefix: str) -> builtins.list[SessionInfo]:
        escaped = id_prefix.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        sql = f"SELECT {', '.join(_COLUMNS)} FROM sessions WHERE lower(id) LIKE ? ESCAPE '\\' "
        return self._query(sql + _ORDER, (escaped + "%",))

    def latest(self, cwd: str | None = None) -> SessionInfo | None:
        """The most recently updated session, optionally only those started in ``cwd``."""
        return self._guarded(lambda: self._latest(cwd))

    def _latest(self, cwd: str | None) -> SessionInfo | None:
        sql = f"SELECT {', '.join(_COLUMNS)} FROM sessions"
        params: tuple[Any, ...] = ()
        if cwd is not None:
            sql += " WHERE cwd = ?"
            params = (cwd,)
        found = self._query(f"{sql} {_ORDER} LIMIT 1", params)
        return found[0] if found else None

    # --- refresh ---------------------------------------------------------------------------------

    def refresh(self) -> RefreshResult:
        """Bring the index in line with the files on disk (re-reading only changed files)."""
        return self._guarded(self._refresh, rebuild=False)

    def _refresh(self) -> RefreshResult:
        known = {
            row[0]: (row[1], row[2])
            for row in self._db.execute("SELECT path, size, mtime_ns FROM sessions")
        }
        added = updated = unchanged = 0
        seen: set[str] = set()
        with self._db:
            for path in _rollout_files(self.home / self.subdir):
                try:
                    stat = path.stat()
                except OSError:
                    continue  # vanished while scanning
                key = str(path)
                seen.add(key)
                previous = known.get(key)
                if previous == (stat.st_size, stat.st_mtime_ns):
                    unchanged += 1
                    continue
                info = extract_facts(path, stat.st_size, stat.st_mtime_ns)
                self._db.execute(
                    f"INSERT OR REPLACE INTO sessions ({', '.join(_COLUMNS)}) "
                    f"VALUES ({', '.join('?' for _ in _COLUMNS)})",
                    _row(info),
                )
                if previous is None:
                    added += 1
                else:
                    updated += 1
            gone = [path for path in known if path not in seen]
            self._db.executemany("DELETE FROM sessions WHERE path = ?", [(p,) for p in gone])
        return RefreshResult(added=added, updated=updated, removed=len(gone), unchanged=unchanged)

    # --- internals -------------------------------------------------------------------------------

    def _query(self, sql: str, params: tuple[Any, ...]) -> builtins.list[SessionInfo]:
        return [_info(row) for row in self._db.execute(sql, params)]

    def _guarded(self, operation: Callable[[], T], *, rebuild: bool = True) -> T:
        """Run a query; on any SQLite error recover once (see :meth:`_recover`) and rerun it
        (after rebuilding the rows from the files, unless the query is that rebuild)."""
        try:
            return operation()
        except sqlite3.Error as exc:
            if self._recovered:
                raise RolloutError(f"session index {self.db_path}: {exc}") from None
            self._db.close()
            self._db = self._recover(exc)
        try:
            if rebuild:
                self._refresh()
            return operation()
        except sqlite3.Error as exc:
            raise RolloutError(f"session index {self.db_path}: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            return _open_database(self.db_path)
        except (sqlite3.Error, OSError) as exc:
            return self._recover(exc)

    def _recover(self, exc: Exception) -> sqlite3.Connection:
        """Treat a database SQLite cannot use like a missing one (once per index object).

        A damaged file is moved aside (``index.sqlite.corrupt-N``) and a new one is created; a
        database that is busy (another process holds its lock) or a home where none can be
        written is left alone, and this run uses an index in memory. Either way the caller
        rebuilds it from the session files and one notice says what happened.
        """
        self._recovered = True
        reason = " ".join(str(exc).split()) or type(exc).__name__
        if not _is_busy(exc) and isinstance(exc, sqlite3.DatabaseError):
            try:
                aside = _move_aside(self.db_path) if self.db_path.exists() else None
                db = _open_database(self.db_path)
            except (sqlite3.Error, OSError):
                pass
            else:
                where = f"; moved it to {aside.name}" if aside is not None else ""
                self.notices.append(
                    f"session index {self.db_path} was unusable ({reason}){where}; "
                    "rebuilt it from the session files"
                )
                return db
        self.notices.append(
            f"session index {self.db_path} is unusable ({reason}); "
            "using a temporary index built from the session files"
        )
        return _open_database(Path(":memory:"))


def _open_database(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=10.0)
    try:
        if str(path) != ":memory:":
            db.execute("PRAGMA journal_mode=WAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version != _SCHEMA_VERSION or "sessions" not in tables:
            with db:
                db.execute("DROP TABLE IF EXISTS sessions")
                db.executescript(_SCHEMA)
                db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        db.execute("SELECT count(*) FROM sessions").fetchone()
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


def _move_aside(path: Path) -> Path:
    """Rename an unreadable database (and its WAL files) to ``<name>.corrupt-N``."""
    number = 1
    while path.with_name(f"{path.name}.corrupt-{number}").exists():
        number += 1
    aside = path.with_name(f"{path.name}.corrupt-{number}")
    path.replace(aside)
    for suffix in ("-wal", "-shm"):
        sidecar = path.with_name(path.name + suffix)
        if sidecar.exists():
            sidecar.replace(path.with_name(f"{path.name}.corrupt-{number}{suffix}"))
    return aside


def _is_busy(exc: Exception) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED: another process is using the database, it is not damaged."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return bool(code & 0xFF in (5, 6))
    return "locked" in str(exc) or "busy" in str(exc)


def _rollout_files(root: Path) -> Iterator[Path]:
    for directory, _, files in os.walk(root):
        for name in files:
            if name.startswith("rollout-") and name.endswith(ROLLOUT_SUFFIXES):
                yield Path(directory) / name


def _row(info: SessionInfo) -> tuple[Any, ...]:
    return (
        info.id,
        str(info.path),
        info.cwd,
        info.created,
        info.updated,
        info.first_user_message,
        info.turn_count,
        info.size,
        info.mtime_ns,
        info.error,
        info.parent_thread_id,
        info.agent_nickname,
    )


def _info(row: tuple[Any, ...]) -> SessionInfo:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["path"] = Path(values["path"])
    return SessionInfo(**values)
