"""A hostile or stuck executor cannot crash or hang the client (timeouts bound it)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import anyio
import pytest
from websockets.asyncio.server import ServerConnection, serve

from mini_codex.environments.client import ExecServerClient, ExecutorGone
from mini_codex.environments.config import EnvironmentsConfig, ExecutorSpec
from mini_codex.environments.manager import ThreadEnvironments
from mini_codex.environments.transport import open_websocket

pytestmark = pytest.mark.anyio

Handler = Callable[[ServerConnection], Awaitable[None]]


async def _with_server(handler: Handler, body: Callable[[str], Awaitable[None]]) -> None:
    async with serve(handler, "127.0.0.1", 0, max_size=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        await body(f"ws://127.0.0.1:{port}")


async def test_garbage_then_a_real_answer(tmp_path: object) -> None:
    async def hostile(ws: ServerConnection) -> None:
        request = json.loads(await ws.recv())
        for junk in (
            "not json",
            "[1]",
            "null",
            json.dumps({"id": 999, "result": {}}),
            json.dumps({"method": "surprise/notification", "params": {}}),
            json.dumps({"method": "process/output", "params": {"processId": "x"}}),
            json.dumps({"id": "weird", "method": "server/request", "params": {}}),
        ):
            await ws.send(junk)
        await ws.send(
            json.dumps(
                {
                    "id": request["id"],
                    "result": {"environmentInfo": {"shell": {"name": "zsh", "path": "/bin/zsh"}}},
                }
            )
        )
        await ws.recv()  # initialized
        await ws.wait_closed()

    async def body(url: str) -> None:
        client = ExecServerClient(await open_websocket(url, timeout_s=10))
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.run)
            info = await client.initialize(timeout_s=10)
            assert info == {"shell": {"name": "zsh", "path": "/bin/zsh"}}
            assert client.ignored == 7
            await client.aclose()

    await _with_server(hostile, body)


async def test_a_huge_frame_ends_the_connection(tmp_path: object) -> None:
    from mini_codex.environments import transport

    async def hostile(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.send("x" * (transport.MAX_MESSAGE_BYTES + 10))
        await ws.wait_closed()

    async def body(url: str) -> None:
        client = ExecServerClient(await open_websocket(url, timeout_s=10))
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.run)
            with anyio.fail_after(60), pytest.raises(ExecutorGone):
                await client.initialize(timeout_s=30)
        assert not client.connected

    await _with_server(hostile, body)


async def test_a_stuck_executor_is_bounded_by_the_initialize_timeout() -> None:
    async def stuck(ws: ServerConnection) -> None:
        await ws.wait_closed()  # accepts, never answers

    async def body(url: str) -> None:
        spec = ExecutorSpec(id="worker", url=url, connect_timeout_s=5, initialize_timeout_s=0.3)
        config = EnvironmentsConfig("local", True, (spec,))
        async with ThreadEnvironments(config, cwd="/", local_shell="bash", spawn_env={}) as envs:
            with anyio.fail_after(10):
                while envs.snapshot().get("worker").state != "failed":  # type: ignore[union-attr]  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            worker = envs.snapshot().get("worker")
            assert worker is not None
            assert (
                worker.error == "exec-server initialize failed: initialize: no answer within 0.3 s"
            )

    await _with_server(stuck, body)


async def test_a_refused_url_fails_and_a_later_snapshot_reconnects() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    spec = ExecutorSpec(id="worker", url=f"ws://127.0.0.1:{port}", connect_timeout_s=5)
    config = EnvironmentsConfig("local", True, (spec,))
    async with ThreadEnvironments(
        config, cwd="/", local_shell="bash", spawn_env={}, retry_after_s=0.05
    ) as envs:
        with anyio.fail_after(10):
            while envs.snapshot().get("worker").state != "failed":  # type: ignore[union-attr]  # noqa: ASYNC110
                await anyio.sleep(0.02)

        async def executor(ws: ServerConnection) -> None:
            request = json.loads(await ws.recv())
            info = {"shell": {"name": "bash", "path": "/bin/bash"}}
            await ws.send(json.dumps({"id": request["id"], "result": {"environmentInfo": info}}))
            await ws.wait_closed()

        async with serve(executor, "127.0.0.1", port):
            with anyio.fail_after(10):
                while envs.snapshot().get("worker").state != "ready":  # type: ignore[union-attr]  # noqa: ASYNC110
                    await anyio.sleep(0.05)
