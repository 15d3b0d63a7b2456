"""Sub-agents in the interactive UI: each spawned child gets a collapsible cell that follows its
status, the calls get readable titles and results, and ``/agents`` lists the children."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import type_and_send, wait_for

from mini_codex.tui.agent_cells import AgentCell
from mini_codex.tui.run import ui_harness

sys.path.insert(0, str(Path(__file__).parents[1] / "host" / "agents"))

from subagent_script import RoutedModel, answer, call, outputs

pytestmark = pytest.mark.anyio


def script(agent: str, step: int, prompt: Any) -> list[Any]:
    if agent == "CHILD":
        return [answer("the child's answer")]
    if step == 0:
        return [call("s", "spawn_agent", {"message": "CHILD: look into it"})]
    if step == 1:
        target = json.loads(outputs(prompt)["s"])["agent_id"]
        return [call("w", "wait_agent", {"targets": [target]})]
    return [answer("parent done")]


async def test_a_child_has_a_collapsible_cell_and_agents_lists_it(make_harness: Any) -> None:
    harness = make_harness([])
    harness.model = RoutedModel(script, ["CHILD", "PARENT"])
    harness.multi_agent = True
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "PARENT: spawn one")
        await wait_for(pilot, lambda: "parent done" in app.transcript_lines())
        cells = list(app.query(AgentCell))
        assert len(cells) == 1
        (child,) = harness.sessions[0].agents.children.values()
        await wait_for(pilot, lambda: "completed" in str(cells[0].title))
        assert str(cells[0].title) == f"agent {child.nickname} · completed"
        assert cells[0].collapsed
        body = str(cells[0].body.content)
        assert body == f"id {child.id}\ntask CHILD: look into it\ncompleted: the child's answer"
        lines = app.transcript_lines()
        assert any(line.startswith("⇉ spawn_agent: CHILD: look into it") for line in lines)
        assert any(
            line.startswith("⇉ wait_agent: ")
            and f"✓ {child.id[-8:]} completed: the child's answer" in line
            for line in lines
        )
        before = len(app.transcript_lines())
        await type_and_send(pilot, "/agents")
        await wait_for(pilot, lambda: len(app.transcript_lines()) > before)
        listed = app.transcript_lines()[-1]
    assert listed == (
        f"sub-agents\n  {child.nickname:<12} {child.id}  open   completed: the child's answer"
    )
