"""``sessions list`` shows sub-agents under the session that spawned them (``--json``: their
``parent_thread_id`` and ``agent_nickname``, from the child's ``session_meta``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

REPO = Path(__file__).parents[2]
sys.path.insert(0, str(REPO / "tests" / "host" / "agents"))

from subagent_script import spawn_two  # noqa: E402

from mini_codex.cli.main import app  # noqa: E402


def test_children_are_listed_under_their_parent(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    parent, children = spawn_two(home, work)
    env = {"MINI_CODEX_HOME": str(home), "COLUMNS": "200"}

    listed: list[dict[str, Any]] = orjson.loads(
        CliRunner().invoke(app, ["sessions", "list", "--json"], env=env).stdout
    )
    links = {s["id"]: (s["parent_thread_id"], s["agent_nickname"]) for s in listed}
    assert links == {parent: (None, None), **{c: (parent, n) for c, n in children.items()}}

    table = CliRunner().invoke(app, ["sessions", "list"], env=env).stdout
    rows = [line.split()[0:3] for line in table.splitlines() if parent in line or "└" in line]
    assert rows[0][0] == parent
    assert sorted((row[1], row[2]) for row in rows[1:]) == sorted(
        (child, f"({nickname})") for child, nickname in children.items()
    )
    assert [row[0] for row in rows[1:]] == ["└", "└"]
