"""``mini-codex sessions list`` over homes holding sessions written by the real ``RolloutRecorder``
(and over a Codex home laid out like ``~/.codex``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.cli.sessions_cmd import index_path_for
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
from mini_codex.rollout.index import INDEX_FILENAME
from mini_codex.rollout.paths import rollout_path
from mini_codex.rollout.recorder import RolloutRecorder

CODEX_CORPUS = Path(__file__).parents[1] / "fixtures" / "rollouts" / "codex"
MINI_CODEX = Path(sys.executable).parent / "mini-codex"
OLDER = "019b6b08-58f3-7580-9dca-fe3f30a10650"
NEWER = "019b6b08-58f3-7580-9dca-fe3f30a10651"
BASE = datetime(2026, 8, 22, 10, 0, tzinfo=UTC)


def turn(text: str, number: int) -> list[RolloutLine]:
    return [
        EventMsgLine(payload=TaskStarted(turn_id=f"t{number}")),
        ResponseItemLine(payload=user_message(text)),
        EventMsgLine(payload=UserMessageEvent(message=text)),
        TurnContextLine(payload=TurnContextItem(turn_id=f"t{number}", model="m", cwd="/x")),
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
    write_session(home, OLDER, "/repo/a", BASE, ["first task\nwith details", "second task"])
    write_session(home, NEWER, "/repo/b", BASE + timedelta(hours=1), ["other task"])
    return home


@pytest.fixture
def env(tmp_path: Path, home: Path) -> dict[str, str]:
    return {"MINI_CODEX_HOME": str(home), "COLUMNS": "120"}


def invoke(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(app, ["sessions", "list", *args], env=env, catch_exceptions=False)


def test_sessions_list_json_lists_recorded_sessions_newest_first(
    home: Path, env: dict[str, str]
) -> None:
    result = invoke(env, "--json")

    assert result.exit_code == 0
    assert orjson.loads(result.stdout) == [
        {
            "id": NEWER,
            "path": str(rollout_path(home, BASE + timedelta(hours=1), NEWER)),
            "cwd": "/repo/b",
            "created": "2026-08-22T00:00:00.000Z",
            "updated": "2026-08-22T11:00:06.000Z",
            "turns": 1,
            "first_user_message": "other task",
            "error": None,
            "parent_thread_id": None,
            "agent_nickname": None,
        },
        {
            "id": OLDER,
            "path": str(rollout_path(home, BASE, OLDER)),
            "cwd": "/repo/a",
            "created": "2026-08-22T00:00:00.000Z",
            "updated": "2026-08-22T10:00:12.000Z",
            "turns": 2,
            "first_user_message": "first task\nwith details",
            "error": None,
            "parent_thread_id": None,
            "agent_nickname": None,
        },
    ]
    assert (home / INDEX_FILENAME).is_file()


def test_sessions_list_table(env: dict[str, str]) -> None:
    result = invoke(env)

    assert result.exit_code == 0
    assert [line.rstrip() for line in result.stdout.splitlines()] == [
        "id                                     updated (UTC)      cwd       turns   first user "
        "message",
        "─" * 94,
        "019b6b08-58f3-7580-9dca-fe3f30a10651   2026-08-22 11:00   /repo/b       1   other task",
        "019b6b08-58f3-7580-9dca-fe3f30a10650   2026-08-22 10:00   /repo/a       2   first task",
    ]


def test_sessions_list_limit(env: dict[str, str]) -> None:
    result = invoke(env, "--json", "--limit", "1")

    assert [session["id"] for session in orjson.loads(result.stdout)] == [NEWER]


def test_sessions_list_sees_a_session_written_after_the_first_listing(
    home: Path, env: dict[str, str]
) -> None:
    invoke(env, "--json")
    third = "019b6b08-58f3-7580-9dca-fe3f30a10652"
    write_session(home, third, "/repo/c", BASE + timedelta(hours=2), ["third"])

    result = invoke(env, "--json")

    assert [session["id"] for session in orjson.loads(result.stdout)] == [third, NEWER, OLDER]


def test_sessions_list_of_an_empty_home(tmp_path: Path) -> None:
    empty = tmp_path / "empty-home"

    result = invoke({"MINI_CODEX_HOME": str(empty)})

    assert (result.exit_code, result.stdout) == (0, f"no sessions under {empty / 'sessions'}\n")


def test_sessions_list_of_a_codex_home_keeps_the_index_out_of_it(
    tmp_path: Path, env: dict[str, str], home: Path
) -> None:
    codex_home = tmp_path / "codex-home"
    name = "codex-0.77.0-2025-12-shell-command-apply-patch-ghost-snapshot.jsonl"
    day = codex_home / "sessions" / "2025" / "12" / "29"
    day.mkdir(parents=True)
    target = day / "rollout-2025-12-29T11-54-27-019b6b08-58f3-7580-9dca-fe3f30a10650.jsonl"
    shutil.copy(CODEX_CORPUS / name, target)

    result = invoke(env, "--json", "--home", str(codex_home))

    assert result.exit_code == 0
    (session,) = orjson.loads(result.stdout)
    assert (session["id"], session["path"], session["turns"]) == (OLDER, str(target), 3)
    assert session["cwd"] is not None
    assert os.listdir(codex_home) == ["sessions"]
    database = index_path_for(codex_home, home)
    assert database is not None
    assert database.is_file()
    assert database.parent == home / "indexes"


def test_sessions_list_of_a_missing_home_is_an_error(tmp_path: Path, env: dict[str, str]) -> None:
    result = invoke(env, "--home", str(tmp_path / "nope"))

    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        f"error: home directory not found: {tmp_path / 'nope'}\n",
    )


def test_sessions_list_end_to_end(home: Path, tmp_path: Path) -> None:
    environment = {**os.environ, "MINI_CODEX_HOME": str(home)}

    done = subprocess.run(
        [str(MINI_CODEX), "sessions", "list", "--json"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert [session["id"] for session in orjson.loads(done.stdout)] == [NEWER, OLDER]
