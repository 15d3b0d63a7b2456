"""``exec_command`` on a remote environment that outlives its yield time leaves a unified exec
session; ``write_stdin`` with that session id goes to that environment's executor
(``process/write``), local sessions keep working beside it, and an executor that goes away ends
its session with an error output. With our executor (websocket and stdio) and Codex's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from env_harness import (
    CODEX,
    codex_executor,
    output_texts,
    session,
    status_and_output,
    stdio_spec,
    wait_states,
    ws_executor,
)

from mini_codex.environments.config import EnvironmentsConfig, ExecutorSpec
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import verify_rollout
from mini_codex.testing import ScriptedResponse, ScriptStep, assistant, function_call

pytestmark = pytest.mark.anyio

REMOTE_CMD = "echo on:$PROBE_VAR; read line; echo got:$line"


@asynccontextmanager
async def worker(kind: str, tmp_path: Path) -> AsyncIterator[ExecutorSpec]:
    if kind == "stdio":
        yield stdio_spec("worker")
    elif kind == "ws":
        async with ws_executor(tmp_path) as (url, _process):
            yield ExecutorSpec(id="worker", url=url, connect_timeout_s=30)
    else:
        if not CODEX.exists():
            pytest.skip("the real Codex CLI is not installed (npm ci)")
        async with codex_executor(tmp_path) as url:
            yield ExecutorSpec(id="worker", url=url, connect_timeout_s=30)


def script() -> list[ScriptStep]:
    return [
        ScriptedResponse(
            [
                function_call(
                    "exec_command",
                    {"cmd": REMOTE_CMD, "environment_id": "worker", "yield_time_ms": 1500},
                    "c1",
                )
            ]
        ),
        ScriptedResponse(
            [
                function_call(
                    "exec_command",
                    {"cmd": "read x; echo local:$x:$PROBE_VAR", "yield_time_ms": 300},
                    "c2",
                )
            ]
        ),
        ScriptedResponse(
            [
                function_call("write_stdin", {"session_id": 1, "chars": "remote\n"}, "c3"),
                function_call("write_stdin", {"session_id": 2, "chars": "here\n"}, "c4"),
            ]
        ),
        ScriptedResponse(
            [function_call("write_stdin", {"session_id": 1, "chars": "again\n"}, "c5")]
        ),
        ScriptedResponse([assistant("done")]),
    ]


@pytest.mark.parametrize("kind", ["ws", "stdio", "codex"])
async def test_write_stdin_reaches_the_remote_session(tmp_path: Path, kind: str) -> None:
    async with worker(kind, tmp_path) as spec:
        config = EnvironmentsConfig("local", True, (spec,))
        async with session(tmp_path, script(), config) as (opened, model):
            with anyio.fail_after(60):
                await wait_states(opened, {"local": "ready", "worker": "ready"})
            await opened.run_turn("talk to both")
            rollout_path = opened.rollout_path
    probe = {"ws": "ws-executor", "stdio": "stdio-executor", "codex": "codex-executor"}[kind]
    first = {k: status_and_output(v) for k, v in output_texts(model.prompts[2].input).items()}
    assert first == {
        "c1": ("Process running with session ID 1", f"on:{probe}\n"),
        "c2": ("Process running with session ID 2", ""),
    }
    second = output_texts(model.prompts[3].input)
    assert status_and_output(second["c3"]) == ("Process exited with code 0", "got:remote\n")
    assert status_and_output(second["c4"]) == (
        "Process exited with code 0",
        "local:here:client-side\n",
    )
    third = output_texts(model.prompts[4].input)
    assert third["c5"] == "write_stdin: no running session 1 (it exited or never existed)"
    assert rollout_path is not None
    assert verify_rollout(list(read_rollout(rollout_path).lines)) == []


async def test_a_session_whose_executor_goes_away(tmp_path: Path) -> None:
    async with ws_executor(tmp_path) as (url, process):
        steps: list[ScriptStep] = [
            ScriptedResponse(
                [
                    function_call(
                        "exec_command",
                        {"cmd": REMOTE_CMD, "environment_id": "worker", "yield_time_ms": 1500},
                        "c1",
                    )
                ]
            ),
            ScriptedResponse(  # a local command kills the executor while the session lives
                [function_call("exec_command", {"cmd": f"kill -9 {process.pid}; sleep 0.2"}, "c2")]
            ),
            ScriptedResponse(
                [function_call("write_stdin", {"session_id": 1, "chars": "x\n"}, "c3")]
            ),
            ScriptedResponse([function_call("write_stdin", {"session_id": 1, "chars": ""}, "c4")]),
            ScriptedResponse([assistant("done")]),
        ]
        spec = ExecutorSpec(id="worker", url=url, connect_timeout_s=30)
        config = EnvironmentsConfig("local", True, (spec,))
        async with session(tmp_path, steps, config) as (opened, model):
            await wait_states(opened, {"local": "ready", "worker": "ready"})
            await opened.run_turn("talk to it")
            rollout_path = opened.rollout_path
    got = output_texts(model.prompts[-1].input)
    assert status_and_output(got["c1"]) == ("Process running with session ID 1", "on:ws-executor\n")
    assert got["c3"].startswith("write_stdin: the executor of session 1 went away (")
    assert got["c3"].endswith("); the session has ended")
    assert got["c4"] == "write_stdin: no running session 1 (it exited or never existed)"
    assert rollout_path is not None
    assert verify_rollout(list(read_rollout(rollout_path).lines)) == []
