"""Several environments in one Session: local + a websocket executor + a stdio executor (ours),
routed by ``environment_id``; the ``<environments>`` block; readiness changing inside a turn; an
executor killed mid-command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from env_harness import (
    ENV,
    FIXTURES,
    ROOT,
    environment_context,
    free_port,
    outputs,
    session,
    stdio_spec,
    wait_states,
    ws_executor,
)

from mini_codex.config import load_config
from mini_codex.environments.config import EnvironmentsConfig, ExecutorSpec
from mini_codex.host import SessionOptions, open_options
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import verify_rollout
from mini_codex.testing import ScriptedModel, ScriptedResponse, ScriptStep, assistant, function_call
from mini_codex.tools.environment_routing import NO_USABLE_ENVIRONMENT

pytestmark = pytest.mark.anyio


def exec_command_schema(tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return next(tool for tool in tools if tool.get("name") == "exec_command")["parameters"]


async def test_commands_route_by_environment_id(tmp_path: Path) -> None:
    refused = f"ws://127.0.0.1:{free_port()}"
    calls = [
        ("worker", "c1"),
        ("devbox", "c2"),
        (None, "c3"),
        ("broken", "c4"),
        ("nope", "c5"),
        ("", "c6"),
    ]
    script: list[ScriptStep] = [
        ScriptedResponse(
            [
                function_call(
                    "exec_command",
                    {"cmd": "echo $PROBE_VAR", **({"environment_id": e} if e is not None else {})},
                    call_id=call_id,
                )
                for e, call_id in calls
            ]
        ),
        ScriptedResponse([assistant("done")]),
    ]
    async with ws_executor(tmp_path) as (url, _process):
        config = EnvironmentsConfig(
            "local",
            True,
            (
                ExecutorSpec(id="worker", url=url, connect_timeout_s=30),
                stdio_spec("devbox"),
                ExecutorSpec(id="broken", url=refused, connect_timeout_s=5),
            ),
        )
        async with session(tmp_path, script, config) as (opened, model):
            await wait_states(
                opened, {"local": "ready", "worker": "ready", "devbox": "ready", "broken": "failed"}
            )
            await opened.run_turn("route them")
            rollout_path = opened.rollout_path
    first, second = model.prompts
    cwd = str((tmp_path / "work").resolve())
    [context] = environment_context(first.input)
    context = context.split("  <current_date>")[0]
    broken_error = context.split("<error>")[1].split("</error>")[0]
    assert broken_error.startswith(
        "exec-server connection attempt failed: failed to connect to exec-server websocket "
        f"`{refused}`"
    )
    assert context == (
        "<environment_context>\n  <environments>\n"
        f'    <environment id="broken" primary="false">\n      <cwd>{cwd}</cwd>\n'
        f"      <status>failed</status>\n      <error>{broken_error}</error>\n    </environment>\n"
        f'    <environment id="devbox" primary="false">\n      <cwd>{cwd}</cwd>\n'
        "      <shell>bash</shell>\n    </environment>\n"
        f'    <environment id="local" primary="true">\n      <cwd>{cwd}</cwd>\n'
        "      <shell>bash</shell>\n    </environment>\n"
        f'    <environment id="worker" primary="false">\n      <cwd>{cwd}</cwd>\n'
        "      <shell>bash</shell>\n    </environment>\n  </environments>\n"
    )
    codex = json.loads((FIXTURES / "codex_multi_env_request.json").read_text())
    ours = exec_command_schema(first.tools)
    assert (
        ours["properties"]["environment_id"]
        == (exec_command_schema(codex["tools"])["properties"]["environment_id"])
    )
    assert outputs(second.input) == {
        "c1": "ws-executor\n",
        "c2": "stdio-executor\n",
        "c3": "client-side\n",
        "c4": NO_USABLE_ENVIRONMENT,
        "c5": "unknown turn environment id `nope`",
        "c6": "exec_command: environment_id must be non-empty",
    }
    assert rollout_path is not None
    assert verify_rollout(list(read_rollout(rollout_path).lines)) == []


async def test_one_local_environment_keeps_todays_schema(tmp_path: Path) -> None:
    script: list[ScriptStep] = [ScriptedResponse([assistant("hi")])]
    seen = []
    for name, config in (("configured", EnvironmentsConfig.local_only()), ("classic", None)):
        (tmp_path / name).mkdir()
        async with session(tmp_path / name, script, config) as (opened, model):
            await opened.run_turn("hello")
        prompt = model.prompts[0]
        context = environment_context(prompt.input)[0].replace(str(tmp_path / name), "$TMP")
        seen.append((prompt.tools, context))
    assert seen[0] == seen[1]
    assert "environment_id" not in exec_command_schema(seen[0][0])["properties"]
    assert "<environments>" not in seen[0][1]


async def test_no_environment_removes_the_shell_and_file_tools(tmp_path: Path) -> None:
    script: list[ScriptStep] = [ScriptedResponse([assistant("hi")])]
    async with session(tmp_path, script, EnvironmentsConfig(None, False)) as (opened, model):
        await opened.run_turn("hello")
    names = sorted(tool.get("name") for tool in model.prompts[0].tools)
    assert not {"exec_command", "write_stdin", "shell", "apply_patch", "view_image"} & set(names)


async def test_a_starting_environment_becomes_ready_within_the_turn(tmp_path: Path) -> None:
    gate, ready = tmp_path / "gate", tmp_path / "ready"
    script: list[ScriptStep] = [
        ScriptedResponse(
            [
                function_call(
                    "exec_command", {"cmd": "echo $PROBE_VAR", "environment_id": "worker"}, "c1"
                ),
                function_call("exec_command", {"cmd": f"touch {gate}"}, "c2"),
            ]
        ),
        ScriptedResponse(
            [
                function_call(
                    "exec_command",
                    {"cmd": f"while [ ! -e {ready} ]; do sleep 0.05; done", "yield_time_ms": 30000},
                    "c3",
                )
            ]
        ),
        ScriptedResponse(
            [
                function_call(
                    "exec_command", {"cmd": "echo $PROBE_VAR", "environment_id": "worker"}, "c4"
                )
            ]
        ),
        ScriptedResponse([assistant("done")]),
    ]
    config = EnvironmentsConfig(
        "local", True, (stdio_spec("worker", gate=gate),), startup_grace_s=0
    )
    async with session(tmp_path, script, config) as (opened, model):
        await wait_states(opened, {"local": "ready", "worker": "starting"})

        async def tell_when_ready() -> None:  # releases c3 once the worker answered initialize
            with anyio.fail_after(60):
                while not gate.exists():  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            await wait_states(opened, {"local": "ready", "worker": "ready"})
            ready.touch()

        async with anyio.create_task_group() as tg:
            tg.start_soon(tell_when_ready)
            await opened.run_turn("use the worker when it is up")
    first = environment_context(model.prompts[0].input)[0]
    assert '<environment id="worker" primary="false">' in first
    assert "<status>starting</status>" in first.split('id="worker"')[1]
    got = outputs(model.prompts[-1].input)
    assert got["c1"] == NO_USABLE_ENVIRONMENT
    assert got["c4"] == "stdio-executor\n"
    cwd = str((tmp_path / "work").resolve())
    update = (
        "<environment_context>\n  <environments>\n"
        f'    <environment id="worker" primary="false">\n      <cwd>{cwd}</cwd>\n'
        "      <shell>bash</shell>\n    </environment>\n  </environments>\n"
    )
    steps = [
        [c for c in environment_context(p.input) if c.startswith(update)] for p in model.prompts
    ]
    assert [len(found) for found in steps] == [0, 0, 1, 1]  # the step diff of request 3


async def test_an_executor_killed_mid_command(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    script: list[ScriptStep] = [
        ScriptedResponse(
            [
                function_call(
                    "exec_command",
                    {
                        "cmd": f"echo started >> {mark}; sleep 60",
                        "environment_id": "worker",
                        "yield_time_ms": 30000,
                    },
                    "c1",
                )
            ]
        ),
        ScriptedResponse(
            [function_call("exec_command", {"cmd": "echo again", "environment_id": "worker"}, "c2")]
        ),
        ScriptedResponse([assistant("done")]),
    ]
    async with ws_executor(tmp_path) as (url, process):
        config = EnvironmentsConfig(
            "local", True, (ExecutorSpec(id="worker", url=url, connect_timeout_s=30),)
        )
        async with session(tmp_path, script, config) as (opened, model):
            await wait_states(opened, {"local": "ready", "worker": "ready"})

            async def kill_when_started() -> None:
                with anyio.fail_after(60):
                    while not mark.exists():  # noqa: ASYNC110
                        await anyio.sleep(0.02)
                os.killpg(process.pid, signal.SIGKILL)

            async with anyio.create_task_group() as tg:
                tg.start_soon(kill_when_started)
                await opened.run_turn("run it there")
    got = outputs(model.prompts[-1].input)
    assert got["c1"].startswith("exec_command: the executor of environment `worker` went away")
    assert got["c1"].endswith("it was not started again")
    assert got["c2"] == NO_USABLE_ENVIRONMENT
    assert mark.read_text() == "started\n"
    update = environment_context(model.prompts[1].input)[-1]  # the diff of the next step
    worker = update.split('<environment id="worker" primary="false">')[1].split("</environment>")[0]
    assert worker.split("\n")[2:4] == [
        "      <status>failed</status>",
        "      <error>exec-server disconnected: websocket closed: no close frame received or sent"
        "</error>",
    ]


async def test_the_real_codex_executor_as_an_environment(tmp_path: Path) -> None:
    codex = ROOT / "node_modules" / ".bin" / "codex"
    if not codex.exists():
        pytest.skip("the real Codex CLI is not installed (npm ci)")
    port = free_port()
    (tmp_path / "codex-home").mkdir()
    process = subprocess.Popen(  # noqa: ASYNC220
        [str(codex), "exec-server", "--listen", f"ws://127.0.0.1:{port}"],
        env={
            **os.environ,
            "PROBE_VAR": "codex-executor",
            "CODEX_HOME": str(tmp_path / "codex-home"),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    script: list[ScriptStep] = [
        ScriptedResponse(
            [
                function_call(
                    "exec_command", {"cmd": "echo $PROBE_VAR", "environment_id": "codex"}, "c1"
                ),
                function_call("exec_command", {"cmd": "echo $PROBE_VAR"}, "c2"),
            ]
        ),
        ScriptedResponse([assistant("done")]),
    ]
    try:
        spec = ExecutorSpec(id="codex", url=f"ws://127.0.0.1:{port}", connect_timeout_s=30)
        config = EnvironmentsConfig("local", True, (spec,))
        async with session(tmp_path, script, config) as (opened, model):
            with anyio.fail_after(60):  # the executor may still be starting: reconnects
                await wait_states(opened, {"local": "ready", "codex": "ready"})
            await opened.run_turn("there and here")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert outputs(model.prompts[-1].input) == {"c1": "codex-executor\n", "c2": "client-side\n"}


async def test_resume_restores_the_selections(tmp_path: Path) -> None:
    first_script: list[ScriptStep] = [ScriptedResponse([assistant("first")])]
    resumed_script: list[ScriptStep] = [
        ScriptedResponse(
            [
                function_call(
                    "exec_command", {"cmd": "echo $PROBE_VAR", "environment_id": "worker"}, "c1"
                ),
                function_call(
                    "exec_command", {"cmd": "echo $PROBE_VAR", "environment_id": "extra"}, "c2"
                ),
            ]
        ),
        ScriptedResponse([assistant("done")]),
    ]
    async with ws_executor(tmp_path) as (url, _process):
        worker = ExecutorSpec(id="worker", url=url, connect_timeout_s=30)
        async with session(
            tmp_path, first_script, EnvironmentsConfig("local", True, (worker,))
        ) as (
            opened,
            _model,
        ):
            await opened.run_turn("hello")
            path = opened.rollout_path
        assert path is not None
        meta = read_rollout(path).lines[0].payload
        cwd = str((tmp_path / "work").resolve())
        assert meta.environments == [  # type: ignore[union-attr]
            {"environment_id": "local", "cwd": cwd},
            {"environment_id": "worker", "cwd": cwd},
        ]
        # Now configured with one more environment: the resumed thread keeps its two.
        extra = stdio_spec("extra")
        config = EnvironmentsConfig("local", True, (worker, extra))
        model = ScriptedModel(resumed_script)
        options = SessionOptions(
            cwd=tmp_path / "work",
            home=tmp_path / "home",
            client=model,
            config=load_config(None, ["tools.unified_exec=true"]),
            sandbox=SandboxPolicy.danger_full_access(),
            env=ENV,
            environ=dict(os.environ),
            environments=config,
            resume_path=path,
        )
        async with open_options(options) as resumed:
            await wait_states(resumed, {"local": "ready", "worker": "ready", "extra": "ready"})
            await resumed.run_turn("again")
    assert outputs(model.prompts[-1].input) == {
        "c1": "ws-executor\n",
        "c2": "unknown turn environment id `extra`",
    }
    assert verify_rollout(list(read_rollout(path).lines)) == []
