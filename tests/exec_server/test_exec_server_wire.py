"""Our executor against the frames recorded from Codex 0.169.0's, and both clients against both."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
import websockets
from exec_server_harness import FIXTURES

from mini_codex.environments.client import ExecServerClient, ExecutorRequestError
from mini_codex.environments.transport import open_websocket, spawn_stdio
from mini_codex.exec_server import ListenConfig, serve_websocket

pytestmark = pytest.mark.anyio


def _shape(value: Any) -> Any:
    """Keys and types, with the values that differ per run or per machine left out."""
    if isinstance(value, dict):
        return {
            key: _shape(item)
            for key, item in value.items()
            if key not in ("sessionId", "environmentInfo", "modifiedAtMs", "size")
        }
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return value


def _script(name: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(request, the frames Codex sent until its answer) per c2s message of a fixture."""
    frames = [json.loads(line) for line in (FIXTURES / name).read_text().splitlines()]
    pairs: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for frame in frames:
        if frame["direction"] == "c2s":
            pairs.append((frame["frame"], []))
        else:
            pairs[-1][1].append(frame["frame"])
    return pairs


async def _replay(url: str, directory: Path, name: str) -> None:
    notes: list[tuple[str, str]] = []
    want_notes: list[tuple[str, str]] = []
    output: dict[tuple[str, str], str] = {}
    want_output: dict[tuple[str, str], str] = {}
    async with websockets.connect(url) as ws:
        for request, recorded in _script(name):
            text = json.dumps(request).replace("$DIR", str(directory))
            await ws.send(text)
            if "id" not in request:
                continue
            got: list[dict[str, Any]] = []
            with anyio.fail_after(20):
                while not got or got[-1].get("id") != request["id"]:
                    got.append(json.loads(await ws.recv()))
            expected = json.loads(json.dumps(recorded).replace("$DIR", str(directory)))
            answer, want = got[-1], expected[-1]
            if "error" in want:  # the code is the contract; our messages may be worded apart
                assert answer.get("error", {}).get("code") == want["error"]["code"], (
                    request,
                    answer,
                )
            elif request["method"] == "environment/info":  # a subset of Codex's keys, same shell
                assert set(answer["result"]) <= set(want["result"]), answer
                assert answer["result"]["shell"] == want["result"]["shell"]
            elif request["method"] == "process/read":  # how output splits across reads races
                assert set(answer["result"]) == set(want["result"])
            else:
                assert _shape(answer) == _shape(want), request
            for m in got:
                if m.get("method") == "process/output":
                    key = (m["params"]["processId"], m["params"]["stream"])
                    output[key] = (
                        output.get(key, "") + base64.b64decode(m["params"]["chunk"]).decode()
                    )
            for m in expected:
                if m.get("method") == "process/output":
                    key = (m["params"]["processId"], m["params"]["stream"])
                    want_output[key] = (
                        want_output.get(key, "") + base64.b64decode(m["params"]["chunk"]).decode()
                    )
            notes.extend((m["method"], m["params"]["processId"]) for m in got if "method" in m)
            want_notes.extend(
                (m["method"], m["params"]["processId"]) for m in expected if "method" in m
            )
    assert sorted(notes) == sorted(want_notes)
    assert output == want_output


async def test_our_executor_answers_the_recorded_codex_session(tmp_path: Path) -> None:
    directory = tmp_path / "exec-ws"
    directory.mkdir()
    config = ListenConfig(own_env=dict(os.environ), cwd=str(tmp_path), shell="/bin/bash")
    bound: list[int] = []
    listening = anyio.Event()

    def ready(port: int) -> None:
        bound.append(port)
        listening.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve_websocket("127.0.0.1", 0, config, ready=ready))
        with anyio.fail_after(10):
            await listening.wait()
        await _replay(f"ws://127.0.0.1:{bound[0]}", directory, "codex_executor_ws.jsonl")
        tg.cancel_scope.cancel()
    assert (directory / "b.txt").read_bytes() == b"hello\n"
    assert not (directory / "d").exists()


async def test_codex_executor_still_answers_the_recorded_session(
    codex_ws: str, tmp_path: Path
) -> None:
    directory = tmp_path / "exec-ws"
    directory.mkdir()
    await _replay(codex_ws, directory, "codex_executor_ws.jsonl")


async def _client_round_trip(client: ExecServerClient, tmp_path: Path) -> dict[str, Any]:
    info = await client.initialize(timeout_s=20)
    result = await client.run_process(
        ["/bin/sh", "-c", "echo $PROBE_VAR; echo e >&2; exit 4"], str(tmp_path), timeout_s=20
    )
    await client.write_file(str(tmp_path / "x.bin"), b"\x00\xffdata")
    data = await client.read_file(str(tmp_path / "x.bin"))
    with pytest.raises(ExecutorRequestError) as missing:
        await client.read_file(str(tmp_path / "missing"))
    return {
        "shell": info["shell"]["name"],
        "lines": sorted(result.output.decode().split()),
        "exit": result.exit_code,
        "data": data,
        "missing": missing.value.code,
    }


EXPECTED = {
    "shell": "bash",
    "lines": ["e", "executor-side"],
    "exit": 4,
    "data": b"\x00\xffdata",
    "missing": -32004,
}


@pytest.mark.parametrize("executor", ["mini", "codex"])
async def test_our_client_over_websocket(
    executor: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = request.getfixturevalue(f"{executor}_ws")
    client = ExecServerClient(await open_websocket(url, timeout_s=20))
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.run)
        assert await _client_round_trip(client, tmp_path) == EXPECTED
        await client.aclose()


@pytest.mark.parametrize("executor", ["mini", "codex"])
async def test_our_client_over_stdio(
    executor: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from exec_server_harness import mini_codex_argv

    if executor == "codex":
        argv = [str(request.getfixturevalue("codex")), "exec-server", "--listen", "stdio"]
        (tmp_path / "home").mkdir()
        env = {**os.environ, "PROBE_VAR": "executor-side", "CODEX_HOME": str(tmp_path / "home")}
    else:
        argv = [*mini_codex_argv(), "exec-server", "--listen", "stdio"]
        env = {**os.environ, "PROBE_VAR": "executor-side"}
    stream = await spawn_stdio(argv[0], argv[1:], env=env, cwd=str(tmp_path))
    client = ExecServerClient(stream)
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.run)
        assert await _client_round_trip(client, tmp_path) == EXPECTED
        await client.aclose()
    assert stream.process is not None
    assert stream.process.returncode is not None
