"""Skills on a remote executor (issue 27 item 6): the capability roots of an environment are
discovered through ``fs/*`` once it is ready, shown in the executor ``skills`` section, and
vanish with Codex's "Skills update" note when it fails. The executor runs in a bubblewrap mount
namespace where its cwd is another directory."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from env_harness import MINI, session, wait_states

from mini_codex.environments.config import EnvironmentsConfig, ExecutorSpec
from mini_codex.protocol import Message
from mini_codex.protocol.session_events import SessionEvent, WarningEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import verify_rollout
from mini_codex.testing import (
    ScriptedResponse,
    ScriptStep,
    assistant,
    function_call,
)

pytestmark = pytest.mark.anyio


def _skill(folder: Path, name: str, description: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nDo.\n")


def _skills_texts(prompt_input: Any) -> list[str]:
    return [
        part.text
        for item in prompt_input
        if isinstance(item, Message) and item.role == "developer"
        for part in item.content
        if getattr(part, "text", "").startswith("<skills_instructions>")
    ]


async def test_executor_skills_appear_when_ready_and_vanish_when_it_fails(tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    here, there, extra = tmp_path / "work", tmp_path / "there", tmp_path / "extra-root"
    here.mkdir()
    _skill(there / ".agents" / "skills" / "lint-fix", "lint-fix", "Fix lint errors.")
    (there / ".agents" / "skills" / "broken").mkdir()
    (there / ".agents" / "skills" / "broken" / "SKILL.md").write_text("no frontmatter\n")
    _skill(extra / "deploy", "deploy", "Deploy the service.")
    gate, ready, pidfile = tmp_path / "gate", tmp_path / "ready", tmp_path / "pid"
    command = (
        f"while [ ! -e {gate} ]; do sleep 0.05; done; echo $$ > {pidfile}; "
        f"exec bwrap --die-with-parent --bind / / --dev /dev --bind {there} {here} -- "
        f"{MINI} exec-server --listen stdio"
    )
    worker = ExecutorSpec(
        id="worker",
        program="sh",
        args=("-c", command),
        initialize_timeout_s=60,
        capability_roots=(str(extra),),
    )
    wait = f"while [ ! -e {ready} ]; do sleep 0.05; done"
    script: list[ScriptStep] = [
        ScriptedResponse([function_call("exec_command", {"cmd": f"touch {gate}"}, "c1")]),
        ScriptedResponse(
            [function_call("exec_command", {"cmd": wait, "yield_time_ms": 30000}, "c2")]
        ),
        ScriptedResponse(
            [function_call("exec_command", {"cmd": f"kill -9 $(cat {pidfile}); sleep 0.5"}, "c3")]
        ),
        ScriptedResponse([assistant("done")]),
    ]
    config = EnvironmentsConfig("local", True, (worker,), startup_grace_s=0)
    events: list[SessionEvent] = []
    async with session(tmp_path, script, config, on_event=events.append) as (opened, model):
        await wait_states(opened, {"local": "ready", "worker": "starting"})

        async def tell_when_ready() -> None:
            with anyio.fail_after(60):
                while not gate.exists():  # noqa: ASYNC110
                    await anyio.sleep(0.02)
                await wait_states(opened, {"local": "ready", "worker": "ready"})
            ready.touch()

        async with anyio.create_task_group() as tg:
            tg.start_soon(tell_when_ready)
            await opened.run_turn("use the worker's skills")
        rollout_path = opened.rollout_path
    per_request = [_skills_texts(p.input) for p in model.prompts]
    cwd = str(here.resolve())
    catalog = (
        "<skills_instructions>\n## Skills\n### Skill roots\n"
        f"- `e0` = `{extra}` on `worker`\n"
        f"- `e1` = `{cwd}/.agents/skills` on `worker`\n"
        "### Available skills\n"
        "- deploy: Deploy the service. (file: e0/deploy/SKILL.md)\n"
        "- lint-fix: Fix lint errors. (file: e1/lint-fix/SKILL.md)\n"
        "</skills_instructions>"
    )
    gone = (
        "<skills_instructions>\n## Skills update\n"
        "No selected-environment skills are currently available.\n</skills_instructions>"
    )
    assert per_request[0] == []
    assert per_request[1] == []
    assert per_request[2] == [catalog]
    assert per_request[3] == [catalog, gone]
    warnings = [event.message for event in events if isinstance(event, WarningEvent)]
    assert warnings == [
        f"failed to load skill {cwd}/.agents/skills/broken/SKILL.md on `worker`: "
        "missing YAML frontmatter delimited by ---"
    ]
    assert rollout_path is not None
    assert verify_rollout(list(read_rollout(rollout_path).lines)) == []
