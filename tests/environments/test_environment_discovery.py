"""AGENTS.md discovered in every ready environment through ``fs/*`` and labeled as Codex does;
the workspace section follows the primary environment. The remote executor runs in a bubblewrap
mount namespace where the session's cwd is another directory, so "there" really differs from
"here" at the same path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from env_harness import FIXTURES, MINI, session, wait_states, ws_executor

from mini_codex.environments.config import EnvironmentsConfig, ExecutorSpec
from mini_codex.protocol import Message
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import verify_rollout
from mini_codex.testing import ScriptedResponse, ScriptStep, assistant, function_call

pytestmark = pytest.mark.anyio


def _trees(tmp_path: Path) -> tuple[Path, Path]:
    here, there = tmp_path / "work", tmp_path / "there"
    for root, rules in ((here, "local rules"), (there, "remote rules")):
        (root / ".git").mkdir(parents=True)
        (root / "AGENTS.md").write_text(rules + "\n")
    (here / "local.txt").write_text("x")
    (there / "remote.txt").write_text("x")
    (there / "src").mkdir()
    (there / "src" / "main.py").write_text("x")
    (there / "build").mkdir()
    (there / "build" / "out.o").write_text("x")
    (there / ".gitignore").write_text("build/\n")
    return here, there


def _bwrapped(env_id: str, here: Path, there: Path, gate: Path | None = None) -> ExecutorSpec:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    command = (
        f"exec bwrap --bind / / --dev /dev --bind {there} {here} -- "
        f"{MINI} exec-server --listen stdio"
    )
    if gate is not None:
        command = f"while [ ! -e {gate} ]; do sleep 0.05; done; {command}"
    return ExecutorSpec(id=env_id, program="sh", args=("-c", command), initialize_timeout_s=60)


def _texts(prompt_input: Any, start: str) -> list[str]:
    return [
        part.text
        for item in prompt_input
        if isinstance(item, Message)
        for part in item.content
        if getattr(part, "text", "").startswith(start)
    ]


async def test_agents_md_of_every_environment_and_the_local_primary_workspace(
    tmp_path: Path,
) -> None:
    here, there = _trees(tmp_path)
    script: list[ScriptStep] = [ScriptedResponse([assistant("ok")])]
    config = EnvironmentsConfig("local", True, (_bwrapped("worker", here, there),))
    async with session(tmp_path, script, config) as (opened, model):
        with anyio.fail_after(60):
            await wait_states(opened, {"local": "ready", "worker": "ready"})
        await opened.run_turn("hello")
        rollout_path = opened.rollout_path
    cwd = str(here.resolve())
    [agents] = _texts(model.prompts[0].input, "# AGENTS.md instructions")
    assert agents == (
        "# AGENTS.md instructions\n\n<INSTRUCTIONS>\n"
        f"for `local` with root {cwd}\n\nlocal rules\n\n\n"
        f"for `worker` with root {cwd}\n\nremote rules\n\n</INSTRUCTIONS>"
    )
    [workspace] = _texts(model.prompts[0].input, "<workspace_files>")
    assert workspace == (
        f"<workspace_files>\nWorkspace root: {cwd}\nFiles: 2\nAGENTS.md\nlocal.txt\n"
        "</workspace_files>"
    )
    assert rollout_path is not None
    assert verify_rollout(list(read_rollout(rollout_path).lines)) == []


async def test_a_remote_primary_gives_its_workspace(tmp_path: Path) -> None:
    here, there = _trees(tmp_path)
    script: list[ScriptStep] = [ScriptedResponse([assistant("ok")])]
    config = EnvironmentsConfig("worker", True, (_bwrapped("worker", here, there),))
    async with session(tmp_path, script, config) as (opened, model):
        with anyio.fail_after(60):
            await wait_states(opened, {"local": "ready", "worker": "ready"})
        await opened.run_turn("hello")
        rollout_path = opened.rollout_path
    cwd = str(here.resolve())
    [workspace] = _texts(model.prompts[0].input, "<workspace_files>")
    assert workspace == (
        f"<workspace_files>\nWorkspace root: {cwd}\nFiles: 4\n"
        ".gitignore\nAGENTS.md\nremote.txt\nsrc/main.py\n</workspace_files>"
    )
    assert rollout_path is not None
    assert verify_rollout(list(read_rollout(rollout_path).lines)) == []


async def test_an_environment_that_becomes_ready_adds_only_its_agents_md(tmp_path: Path) -> None:
    here, there = _trees(tmp_path)
    gate, ready = tmp_path / "gate", tmp_path / "ready"
    wait = f"while [ ! -e {ready} ]; do sleep 0.05; done"
    script: list[ScriptStep] = [
        ScriptedResponse([function_call("exec_command", {"cmd": f"touch {gate}"}, "c1")]),
        ScriptedResponse(
            [function_call("exec_command", {"cmd": wait, "yield_time_ms": 30000}, "c2")]
        ),
        ScriptedResponse([assistant("done")]),
    ]
    worker = _bwrapped("worker", here, there, gate=gate)
    config = EnvironmentsConfig("local", True, (worker,), startup_grace_s=0)
    async with session(tmp_path, script, config) as (opened, model):
        await wait_states(opened, {"local": "ready", "worker": "starting"})

        async def tell_when_ready() -> None:  # releases c2 once the worker is ready
            with anyio.fail_after(60):
                while not gate.exists():  # noqa: ASYNC110
                    await anyio.sleep(0.02)
                await wait_states(opened, {"local": "ready", "worker": "ready"})
            ready.touch()

        async with anyio.create_task_group() as tg:
            tg.start_soon(tell_when_ready)
            await opened.run_turn("wait for the worker")
        rollout_path = opened.rollout_path
    cwd = str(here.resolve())
    per_request = [_texts(p.input, "# AGENTS.md instructions") for p in model.prompts]
    assert per_request[0] == [
        f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\nlocal rules\n\n</INSTRUCTIONS>"
    ]
    added = (
        "# AGENTS.md instructions\n\n<INSTRUCTIONS>\n"
        f"for `worker` with root {cwd}\n\nremote rules\n\n</INSTRUCTIONS>"
    )
    assert per_request[1] == per_request[0]
    assert per_request[2] == [*per_request[0], added]
    assert rollout_path is not None
    assert verify_rollout(list(read_rollout(rollout_path).lines)) == []


def _developer_texts(prompt_input: Any) -> list[str]:
    return [
        part.text
        for item in prompt_input
        if isinstance(item, Message) and item.role == "developer"
        for part in item.content
        if hasattr(part, "text")
    ]


async def test_the_environments_instructions_with_the_feature(tmp_path: Path) -> None:
    from mini_codex.config import load_config

    codex = json.loads((FIXTURES / "codex_environments_instructions_request.json").read_text())
    [codex_text] = [
        part["text"]
        for item in codex["input"]
        if item.get("role") == "developer"
        for part in item["content"]
        if part.get("text", "").startswith("<environments_instructions>")
    ]
    script: list[ScriptStep] = [
        ScriptedResponse([function_call("exec_command", {"cmd": "true"}, "c1")]),
        ScriptedResponse([assistant("ok")]),
    ]
    async with ws_executor(tmp_path) as (url, _process):
        spec = ExecutorSpec(id="worker", url=url, connect_timeout_s=30)
        config = EnvironmentsConfig("local", True, (spec,))
        overrides = ["tools.unified_exec=true", "features.deferred_executor=true"]
        async with session(
            tmp_path, script, config, config_overrides=load_config(None, overrides)
        ) as (opened, model):
            await wait_states(opened, {"local": "ready", "worker": "ready"})
            await opened.run_turn("hello")
            rollout_path = opened.rollout_path
    first = _developer_texts(model.prompts[0].input)
    starts = [text.split("\n", 1)[0] for text in first]
    index = first.index(codex_text)
    assert starts[index - 1].startswith("<permissions")
    assert starts[index + 1].startswith("<tool")
    assert codex_text not in _developer_texts(model.prompts[1].input)[len(first) :]
    assert rollout_path is not None
    assert verify_rollout(list(read_rollout(rollout_path).lines)) == []
