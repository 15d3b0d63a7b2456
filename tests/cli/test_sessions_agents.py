"""``sessions list`` shows sub-agents under the session that spawned them (``--json``: their
``parent_thread_id`` and ``agent_nickname``, from the child's ``session_meta``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
from typer.testing import CliRunner

REPO = Path(__file__).parents[2]
sys.path.insert(0, str(REPO / "tests" / "host" / "agents"))

from subagent_script import RoutedModel, answer, call  # noqa: E402

from mini_codex.cli.main import app  # noqa: E402
from mini_codex.config import Config  # noqa: E402
from mini_codex.host import open_options  # noqa: E402
from mini_codex.host.assemble import SessionOptions  # noqa: E402
from mini_codex.models.base import Prompt  # noqa: E402
from mini_codex.protocol import ResponseItem  # noqa: E402
from mini_codex.protocol.policy import SandboxPolicy  # noqa: E402


def spawn_two(home: Path, work: Path) -> tuple[str, dict[str, str]]:
    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent == "PARENT" and step == 0:
            return [call(f"s{n}", "spawn_agent", {"message": f"CHILD-{n}"}) for n in (1, 2)]
        return [answer(f"{agent} done")]

    async def run() -> tuple[str, dict[str, str]]:
        options = SessionOptions(
            cwd=work,
            home=home,
            client=RoutedModel(script, ["CHILD-1", "CHILD-2", "PARENT"]),
            config=Config.model_validate({"features": {"multi_agent": True}}),
            sandbox=SandboxPolicy.danger_full_access(),
            approval_policy="never",
            admin_skills_root=None,
        )
        async with open_options(options) as session:
            await session.run_turn("PARENT: spawn two")
            children = {c.id: c.nickname or "" for c in session.agents.children.values()}
            return session.session_id, children

    return anyio.run(run)


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
