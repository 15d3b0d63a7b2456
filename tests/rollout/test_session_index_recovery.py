"""A damaged session index is rebuilt from the files, never fatal (issue 19).

Reproduction: an ``index.sqlite`` with a valid header and a corrupted page made ``sessions list``
fail on every run ("database disk image is malformed", never rebuilt) and ``resume --last`` crash
with a ``sqlite3.DatabaseError`` traceback. Now any SQLite error, at open or in a query, moves the
file aside and rebuilds it once, with one notice line.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from test_session_index import expected_infos, home  # noqa: F401  (the fixture)
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.rollout.index import INDEX_FILENAME, SessionIndex

runner = CliRunner()


def corrupt_pages(db_path: Path, *, first_page: int = 2, last_page: int | None = None) -> bytes:
    """Overwrite pages ``first_page..last_page`` (1-based; page 2 holds the ``sessions`` rows),
    keeping the header and the schema page intact."""
    with sqlite3.connect(db_path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    data = bytearray(db_path.read_bytes())
    start = (first_page - 1) * page_size
    end = len(data) if last_page is None else last_page * page_size
    assert len(data) >= end > start
    data[start:end] = b"\xa5" * (end - start)
    db_path.write_bytes(bytes(data))
    return bytes(data)


def built_index(root: Path) -> Path:
    with SessionIndex(root) as index:
        index.refresh()
    return root / INDEX_FILENAME


def test_the_corruption_is_real(home: Path) -> None:  # noqa: F811
    corrupt_pages(built_index(home))
    db = sqlite3.connect(home / INDEX_FILENAME)
    try:
        db.execute("SELECT * FROM sessions").fetchall()
        raised = None
    except sqlite3.DatabaseError as exc:
        raised = str(exc)
    finally:
        db.close()
    assert raised == "database disk image is malformed"


def test_a_corrupted_page_is_moved_aside_and_rebuilt_once(home: Path) -> None:  # noqa: F811
    damaged = corrupt_pages(built_index(home), last_page=2)  # only the table: opening works
    with SessionIndex(home) as index:
        assert index.notices == []
        assert index.list() == expected_infos(home)  # the query fails, recovers, rebuilds
        assert index.notices == [
            f"session index {home / INDEX_FILENAME} was unusable (database disk image is "
            f"malformed); moved it to {INDEX_FILENAME}.corrupt-1; rebuilt it from the session "
            "files"
        ]
    assert (home / f"{INDEX_FILENAME}.corrupt-1").read_bytes() == damaged
    with SessionIndex(home) as index:  # the rebuilt database is fine: no second notice
        index.refresh()
        assert (index.list(), index.notices) == (expected_infos(home), [])


def test_damage_found_when_opening_is_recovered_the_same_way(home: Path) -> None:  # noqa: F811
    corrupt_pages(built_index(home))  # every page after the schema
    with SessionIndex(home) as index:
        index.refresh()
        assert index.list() == expected_infos(home)
        assert len(index.notices) == 1
    assert (home / f"{INDEX_FILENAME}.corrupt-1").exists()


def test_an_index_that_cannot_be_created_is_kept_in_memory(
    home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with SessionIndex(home, db_path=blocker / INDEX_FILENAME) as index:
        index.refresh()
        assert index.list() == expected_infos(home)
        [notice] = index.notices
    assert notice.startswith(f"session index {blocker / INDEX_FILENAME} is unusable (")
    assert notice.endswith("); using a temporary index built from the session files")


def test_sessions_list_and_resume_last_survive_a_corrupted_index(
    home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    corrupt_pages(built_index(home), last_page=2)
    env: dict[str, str | None] = {"MINI_CODEX_HOME": str(home), "OPENAI_API_KEY": None}
    listed = runner.invoke(app, ["sessions", "list", "--json"], env=env)
    assert listed.exit_code == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)] == [i.id for i in expected_infos(home)]
    assert listed.stderr.count("\n") == 1
    assert listed.stderr.startswith("notice: session index ")

    corrupt_pages(home / INDEX_FILENAME, last_page=2)
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"output": [{"type": "message", "content": "back"}]}) + "\n")
    args = ["resume", "--last", "again", "--model", f"scripted:{script}", "--cd", str(tmp_path)]
    resumed = runner.invoke(app, [*args, "--json"], env=env)
    assert "Traceback" not in resumed.stdout + resumed.stderr
    assert resumed.exit_code == 0, resumed.stderr
    assert resumed.stderr.startswith("notice: session index ")
    assert '"back"' in resumed.stdout


def test_resume_by_id_prefix_survives_a_corrupted_index(
    home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    corrupt_pages(built_index(home), last_page=2)
    newest = expected_infos(home)[0]
    before = newest.path.read_bytes()
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"output": [{"type": "message", "content": "back"}]}) + "\n")
    env: dict[str, str | None] = {"MINI_CODEX_HOME": str(home), "OPENAI_API_KEY": None}
    args = ["resume", newest.id, "again", "--model", f"scripted:{script}"]
    resumed = runner.invoke(app, [*args, "--cd", str(tmp_path), "--json"], env=env)
    assert (resumed.exit_code, resumed.stderr.count("\n")) == (0, 1), resumed.stderr
    assert resumed.stderr.startswith("notice: session index ")
    assert newest.path.read_bytes().startswith(before)
