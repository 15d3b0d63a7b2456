"""What the parent's world state says about its children: the ``<subagents>`` lines of the
``environments`` section (rendered only when something else there changes, as in Codex) and the
``multi_agent`` section persisted in the rollout (what a resume restores)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from subagent_script import RoutedModel, answer, call, user_texts

from mini_codex.config import Config
from mini_codex.host import open_options
from mini_codex.host.assemble import SessionOptions
from mini_codex.models.base import Prompt
from mini_codex.protocol import ResponseItem, WorldStateLine
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.rollout.reader import read_rollout


@pytest.mark.anyio
async def test_open_children_are_listed_in_the_environment_context_and_persisted(
    tmp_path: Path,
) -> None:
    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent == "CHILD":
            return [answer("child done")]
        if agent == "PARENT" and step == 0:
            return [call("s", "spawn_agent", {"message": "CHILD"})]
        return [answer("parent done")]

    day = [datetime(2026, 12, 2, 9, 0, tzinfo=UTC)]
    client = RoutedModel(script, ["CHILD", "PARENT"])
    (tmp_path / "work").mkdir()
    options = SessionOptions(
        cwd=tmp_path / "work",
        home=tmp_path / "home",
        client=client,
        config=Config.model_validate({"features": {"multi_agent": True}}),
        sandbox=SandboxPolicy.danger_full_access(),
        approval_policy="never",
        admin_skills_root=None,
        clock=lambda: day[0],
    )
    async with open_options(options) as session:
        await session.run_turn("PARENT: spawn")
        (child,) = session.agents.children
        same_day = client.requests_of("PARENT")[-1]
        day[0] += timedelta(days=1)  # the date changes: the environment context renders
        await session.run_turn("PARENT: again")
        next_day = client.requests_of("PARENT")[-1]
        path = session.rollout_path
    assert not [t for t in user_texts(same_day) if "<subagents>" in t]
    (rendered,) = [t for t in user_texts(next_day) if "<current_date>2026-12-03" in t]
    assert rendered.endswith(
        f"  <current_date>2026-12-03</current_date>\n  <timezone>Etc/UTC</timezone>\n"
        f"  <subagents>\n    - {child}: Sagan\n  </subagents>\n</environment_context>"
    )
    assert path is not None
    states = [
        line.payload.model_dump(mode="json")
        for line in read_rollout(path).lines
        if isinstance(line, WorldStateLine)
    ]
    # A full snapshot with no children, then merge patches: the child appears (the step after
    # the spawn) with its roster line; its status follows.
    assert states[0]["full"] is True
    assert states[0]["state"]["multi_agent"] == {"agents": {}}
    patches = [s["state"] for s in states[1:]]
    assert all(s["full"] is False for s in states[1:])
    first = next(p for p in patches if "multi_agent" in p)
    assert first["multi_agent"]["agents"][child]["nickname"] == "Sagan"
    assert first["environments"]["subagents"] == f"- {child}: Sagan"
    statuses = [p["multi_agent"]["agents"][child]["status"] for p in patches if "multi_agent" in p]
    assert statuses[-1] == {"completed": "child done"}
