"""Run by ``test_subagent_resume.py`` in a subprocess it then kills with SIGKILL: a parent that
spawns one child whose command never ends, and waits for it.

    python subagent_kill_target.py WORK HOME
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from subagent_script import RoutedModel, answer, call, outputs

from mini_codex.config import Config
from mini_codex.host import open_options
from mini_codex.host.assemble import SessionOptions
from mini_codex.models.base import Prompt
from mini_codex.protocol import ResponseItem
from mini_codex.protocol.policy import SandboxPolicy


def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
    if agent == "CHILD":
        command = "echo $$ > child.pid && exec sleep 60"
        return [call("forever", "shell", {"command": command}, namespace=None)]
    if step == 0:
        return [call("s", "spawn_agent", {"message": "CHILD: run forever"})]
    target = json.loads(outputs(prompt)["s"])["agent_id"]
    if step == 1:
        return [call("w", "wait_agent", {"targets": [target], "timeout_ms": 3_600_000})]
    return [answer("unreachable")]


async def main(work: Path, home: Path) -> None:
    options = SessionOptions(
        cwd=work,
        home=home,
        client=RoutedModel(script, ["CHILD", "PARENT"]),
        config=Config.model_validate({"features": {"multi_agent": True}}),
        sandbox=SandboxPolicy.danger_full_access(),
        approval_policy="never",
        admin_skills_root=None,
    )
    async with open_options(options) as session:
        print(session.rollout_path, flush=True)
        await session.run_turn("PARENT: spawn a child and wait")


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]), Path(sys.argv[2]))
