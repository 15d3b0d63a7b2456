"""One exec-server connection: read messages, answer requests, send notifications.

Requests run concurrently (a long-poll ``process/read`` does not block a ``process/write``);
answers and notifications are written one at a time. Like Codex 0.169's executor, a notification
other than ``initialized`` ends the connection, and so does a message that is not JSON. A request
with a bad shape gets ``-32600``. When the connection ends, its processes are killed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio

from mini_codex.environments.local_executor import LocalExecutor
from mini_codex.environments.processes import ExecutorError
from mini_codex.environments.transport import MessageStream, TransportClosed
from mini_codex.protocol.exec_server import INTERNAL_ERROR, INVALID_REQUEST

__all__ = ["serve_connection"]


class _Hangup(Exception):
    pass


async def serve_connection(
    stream: MessageStream,
    *,
    own_env: Mapping[str, str],
    cwd: str,
    shell: str,
    allow_unsandboxed: bool = False,
) -> None:
    """Serve ``stream`` until it ends; every process it started is killed then."""
    lock = anyio.Lock()

    async def send(message: dict[str, Any]) -> None:
        async with lock:
            await stream.send(json.dumps(message))

    async def notify(method: str, params: dict[str, Any]) -> None:
        try:
            await send({"method": method, "params": params})
        except TransportClosed:
            pass

    async def answer(executor: LocalExecutor, request_id: Any, method: str, params: Any) -> None:
        try:
            result = await executor.handle(method, params)
            reply: dict[str, Any] = {"id": request_id, "result": result}
        except ExecutorError as exc:
            reply = {"id": request_id, "error": {"code": exc.code, "message": exc.message}}
        except Exception as exc:  # a bug must not take the connection down
            reply = {"id": request_id, "error": {"code": INTERNAL_ERROR, "message": repr(exc)}}
        try:
            await send(reply)
        except TransportClosed:
            pass

    try:
        async with anyio.create_task_group() as tg:
            executor = LocalExecutor(
                tg,
                notify,
                own_env=own_env,
                cwd=cwd,
                shell=shell,
                allow_unsandboxed=allow_unsandboxed,
            )
            try:
                while True:
                    try:
                        text = await stream.receive()
                    except TransportClosed:
                        break
                    message = _parse(text)
                    if "id" not in message:
                        if message.get("method") == "initialized":
                            continue
                        break  # an unknown notification: hang up, as Codex does
                    method = message.get("method")
                    if not isinstance(method, str):
                        error = {"code": INVALID_REQUEST, "message": "missing method"}
                        await send({"id": message["id"], "error": error})
                        continue
                    tg.start_soon(answer, executor, message["id"], method, message.get("params"))
            except (_Hangup, TransportClosed):
                pass
            finally:
                executor.aclose()
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()


def _parse(text: str) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except ValueError:
        raise _Hangup from None
    if not isinstance(message, dict):
        raise _Hangup
    return message
