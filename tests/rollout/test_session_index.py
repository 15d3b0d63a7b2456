"""SessionIndex: a rebuildable SQLite cache of the rollout files under a home directory."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from mini_codex.protocol import (
    EventMsgLine,
    ResponseItemLine,
    RolloutLine,
    SessionMeta,
    TaskComplete,
    TaskStarted,
    TurnContextItem,
    TurnContextLine,
    UserMessageEvent,
    assistant_message,
    user_message,
)
from mini_codex.rollout.index import INDEX_FILENAME, RefreshResult, SessionIndex, SessionInfo
from mini_codex.rollout.paths import rollout_path
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.recorder import RolloutRecorder

CODEX_CORPUS = Path(__file__).parents[1] / "fixtures" / "rollouts" / "codex"
IDS = (
    "019b6b08-58f3-7580-9dca-fe3f30a10650",
    "019b6b08-58f3-7580-9dca-fe3f30a10651",
    "01a0d095-5bd9-7d73-871a-b6756ea97139",
)


def turn(text: str, number: int) -> list[RolloutLine]:
    return [
        EventMsgLine(payload=TaskStarted(turn_id=f"t{number}")),
        TurnContextLine(payload=TurnContextItem(turn_id=f"t{number}", model="m")),
        ResponseItemLine(payload=user_message("<environment_context>x</environment_context>")),
        ResponseItemLine(payload=user_message(text)),
        EventMsgLine(payload=UserMessageEvent(message=text)),
        ResponseItemLine(payload=assistant_message("ok")),
        EventMsgLine(payload=TaskComplete(turn_id=f"t{number}")),
    ]


def write_session(
    home: Path, thread_id: str, cwd: str, start: datetime, prompts: list[str]
) -> Path:
    path = rollout_path(home, start, thread_id)
    meta = SessionMeta(id=thread_id, cwd=cwd, timestamp="2026-08-22T00:00:00.000Z")
    ticks = iter(range(10_000))

    def clock() -> datetime:
        return start + timedelta(seconds=next(ticks))

    async def write() -> None:
        async with RolloutRecorder.open(path, session_meta=meta, clock=clock) as recorder:
            for number, prompt in enumerate(prompts):
                await recorder.record(turn(prompt, number))

    anyio.run(write)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    base = datetime(2026, 8, 22, 10, 0, tzinfo=UTC)
    write_session(home, IDS[0], "/repo/a", base, ["first task", "second task"])
    write_session(home, IDS[1], "/repo/b", base + timedelta(hours=1), ["other task"])
    return home


def expected_infos(home: Path) -> list[SessionInfo]:
    newer = rollout_path(home, datetime(2026, 8, 22, 11, 0, tzinfo=UTC), IDS[1])
    older = rollout_path(home, datetime(2026, 8, 22, 10, 0, tzinfo=UTC), IDS[0])
    return [
        SessionInfo(
            id=IDS[1],
            path=newer,
            cwd="/repo/b",
            created="2026-08-22T00:00:00.000Z",
            updated="2026-08-22T11:00:07.000Z",
            first_user_message="other task",
            turn_count=1,
            size=newer.stat().st_size,
            mtime_ns=newer.stat().st_mtime_ns,
        ),
        SessionInfo(
            id=IDS[0],
            path=older,
            cwd="/repo/a",
            created="2026-08-22T00:00:00.000Z",
            updated="2026-08-22T10:00:14.000Z",
            first_user_message="first task",
            turn_count=2,
            size=older.stat().st_size,
            mtime_ns=older.stat().st_mtime_ns,
        ),
    ]


def test_refresh_lists_sessions_newest_first(home: Path) -> None:
    with SessionIndex(home) as index:
        assert index.refresh() == RefreshResult(added=2, updated=0, removed=0, unchanged=0)
        assert index.list() == expected_infos(home)
        assert index.list(limit=1) == expected_infos(home)[:1]
    assert (home / INDEX_FILENAME).exists()


def test_index_is_in_wal_mode(home: Path) -> None:
    SessionIndex(home).close()
    with sqlite3.connect(home / INDEX_FILENAME) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_refresh_rereads_only_changed_files_and_drops_vanished_ones(home: Path) -> None:
    newer, older = expected_infos(home)
    with SessionIndex(home) as index:
        index.refresh()
        assert index.refresh() == RefreshResult(added=0, updated=0, removed=0, unchanged=2)
        write_more = older.path.read_bytes()
        older.path.write_bytes(write_more + write_more.splitlines(keepends=True)[-1])
        newer.path.unlink()
        assert index.refresh() == RefreshResult(added=0, updated=1, removed=1, unchanged=0)
        [info] = index.list()
        assert (info.id, info.size) == (IDS[0], older.path.stat().st_size)


def test_deleted_database_rebuilds_the_same_listing(home: Path) -> None:
    with SessionIndex(home) as index:
        index.refresh()
        before = index.list()
    (home / INDEX_FILENAME).unlink()
    with SessionIndex(home) as index:
        assert index.list() == []
        index.refresh()
        assert index.list() == before


def test_corrupt_database_is_moved_aside_and_rebuilt(home: Path) -> None:
    home.joinpath(INDEX_FILENAME).write_bytes(b"this is not a sqlite database" * 100)
    with SessionIndex(home) as index:
        index.refresh()
        assert index.list() == expected_infos(home)
    aside = home / f"{INDEX_FILENAME}.corrupt-1"
    assert aside.read_bytes() == b"this is not a sqlite database" * 100


def test_database_of_another_schema_version_is_rebuilt(home: Path) -> None:
    with sqlite3.connect(home / INDEX_FILENAME) as db:
        db.execute("CREATE TABLE sessions (id TEXT)")
        db.execute("PRAGMA user_version = 99")
    db.close()
    with SessionIndex(home) as index:
        index.refresh()
        assert index.list() == expected_infos(home)


def test_find_by_id_prefix_and_latest_by_cwd(home: Path) -> None:
    newer, older = expected_infos(home)
    with SessionIndex(home) as index:
        index.refresh()
        assert index.find("019B6B08") == [newer, older]
        assert index.find(IDS[0][:-1] + "0") == [older]
        assert index.find("%") == []
        assert index.find("019b6b08_58f3") == []
        assert index.latest() == newer
        assert index.latest("/repo/a") == older
        assert index.latest("/elsewhere") is None


def test_unreadable_file_is_listed_with_its_error(home: Path) -> None:
    path = rollout_path(home, datetime(2026, 8, 23, tzinfo=UTC), IDS[2])
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    with SessionIndex(home) as index:
        index.refresh()
        [broken] = [info for info in index.list() if info.id == IDS[2]]
    assert broken == SessionInfo(
        id=IDS[2],
        path=path,
        cwd=None,
        created=None,
        updated=None,
        first_user_message=None,
        turn_count=0,
        size=0,
        mtime_ns=path.stat().st_mtime_ns,
        error=f"empty session file: {path}",
    )


def test_indexes_a_codex_home(tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    day = codex_home / "sessions" / "2025" / "10" / "21"
    day.mkdir(parents=True)
    name = "rollout-2025-10-21T20-02-50-019a085e-04c1-7f81-a09e-9555f6a1fb40.jsonl"
    shutil.copy(
        CODEX_CORPUS / "codex-0.47.0-2025-10-gpt5-codex-pomodoro-apply-patch.jsonl", day / name
    )
    name = "rollout-2026-09-23T19-24-04-01a0d095-5bd9-7d73-871a-b6756ea97139.jsonl"
    shutil.copy(
        CODEX_CORPUS / "codex-desktop-0.155.0-alpha-2026-09-world-state-token-usage-record.jsonl",
        day / name,
    )
    with SessionIndex(codex_home, db_path=tmp_path / "ours" / INDEX_FILENAME) as index:
        index.refresh()
        summary = [
            (info.id, info.cwd, info.turn_count, (info.first_user_message or "")[:24])
            for info in index.list()
        ]
    assert not (codex_home / INDEX_FILENAME).exists()
    assert summary == [
        ("01a0d095-5bd9-7d73-871a-b6756ea97139", "/srv/repo", 3, "[redacted][redacted][red"),
        (
            "019a085e-04c1-7f81-a09e-9555f6a1fb40",
            "/Users/user/dev/pomodoro/codex",
            3,
            "Build a simple Pomodoro ",
        ),
    ]


def test_a_manual_compaction_is_not_counted_as_a_turn(tmp_path: Path) -> None:
    """A real session: turn, ``Session.compact()`` (a task of its own, without user input),
    turn. The index counts two turns."""
    from mini_codex.host import SessionOptions, open_options
    from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant

    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    script = [ScriptedResponse([assistant(text)]) for text in ("ok", "the summary", "done")]
    options = SessionOptions(cwd=work, home=home, client=ScriptedModel(script), env={})

    async def run() -> Path | None:
        async with open_options(options) as session:
            await session.run_turn("first task")
            assert await session.compact() is not None
            await session.run_turn("second task")
            return session.rollout_path

    path = anyio.run(run)
    assert path is not None
    kinds = [
        line.payload.type for line in read_rollout(path).lines if isinstance(line, EventMsgLine)
    ]
    assert kinds.count("task_started") == 3
    with SessionIndex(home) as index:
        index.refresh()
        (info,) = index.list()
    assert (info.turn_count, info.first_user_message) == (2, "first task")
