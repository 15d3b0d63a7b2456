"""``mini-codex exec-server``: auth, Origin, closing a connection kills its processes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
import websockets
from exec_server_harness import free_port, mini_codex_argv, start_executor, stop, wait_port
from websockets.exceptions import InvalidStatus

pytestmark = pytest.mark.anyio


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"


async def _initialize(ws: websockets.ClientConnection) -> None:
    await ws.send(json.dumps({"id": 1, "method": "initialize", "params": {"clientName": "t"}}))
    assert "sessionId" in json.loads(await ws.recv())["result"]
    await ws.send(json.dumps({"method": "initialized", "params": {}}))


async def test_a_closed_connection_kills_its_processes(mini_ws: str, tmp_path: Path) -> None:
    async with websockets.connect(mini_ws) as ws:
        await _initialize(ws)
        start = {
            "processId": "p",
            "argv": ["/bin/sh", "-c", "echo $$; exec sleep 300"],
            "cwd": f"file://{tmp_path}",
            "env": {},
        }
        await ws.send(json.dumps({"id": 2, "method": "process/start", "params": start}))
        output = None
        with anyio.fail_after(20):
            while output is None:
                message = json.loads(await ws.recv())
                if message.get("method") == "process/output":
                    import base64

                    output = base64.b64decode(message["params"]["chunk"])
        pid = int(output.split()[0])
        assert _alive(pid)
    with anyio.fail_after(20):
        while _alive(pid):  # noqa: ASYNC110 (another process's state: nothing to wait on)
            await anyio.sleep(0.05)


async def test_an_origin_header_is_refused(mini_ws: str) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with websockets.connect(mini_ws, origin="http://evil.example"):  # type: ignore[arg-type]
            pass
    assert refused.value.response.status_code == 403


async def test_capability_token(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    port = free_port()
    process = start_executor(
        [
            *mini_codex_argv(),
            "exec-server",
            "--listen",
            f"ws://127.0.0.1:{port}",
            "--ws-auth",
            "capability-token",
            "--ws-token-file",
            str(token),
        ],
        dict(os.environ),
        tmp_path,
    )
    try:
        wait_port(port)
        url = f"ws://127.0.0.1:{port}"
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            with pytest.raises(InvalidStatus) as refused:
                async with websockets.connect(url, additional_headers=headers):
                    pass
            assert refused.value.response.status_code == 401
        async with websockets.connect(
            url, additional_headers={"Authorization": "Bearer s3cret"}
        ) as ws:
            await _initialize(ws)
    finally:
        stop(process)


def test_non_loopback_without_auth_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [*mini_codex_argv(), "exec-server", "--listen", "ws://0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: refusing to listen on non-loopback 0.0.0.0 without authentication: "
        "use --ws-auth capability-token --ws-token-file FILE"
    )


async def test_hostile_input_never_takes_the_executor_down(mini_ws: str) -> None:
    for frame in ("not json", "[1, 2]", json.dumps({"method": "bogus/notification"})):
        async with websockets.connect(mini_ws) as ws:
            await _initialize(ws)
            await ws.send(frame)
            with pytest.raises(websockets.ConnectionClosed):  # hung up, as Codex does
                with anyio.fail_after(20):
                    await ws.recv()
    async with websockets.connect(mini_ws) as ws:  # still serving new connections
        await _initialize(ws)
        await ws.send(json.dumps({"id": 2, "method": "process/read", "params": {}}))
        assert json.loads(await ws.recv())["error"]["code"] == -32602
