"""The executor client: Codex's exec-server protocol over a ``MessageStream``.

``ExecServerClient(stream)``; ``await client.run()`` is the reader loop (run it in a task group you
own; it returns when the stream ends, failing every pending request with ``ExecutorGone``);
``initialize`` sends ``initialize`` + ``initialized`` and keeps the returned ``environmentInfo``.
``request`` is bounded by a timeout. ``run_process`` starts a command and collects its output from
the ``process/output`` / ``process/exited`` / ``process/closed`` notifications.

A hostile executor cannot crash or hang the client: malformed JSON, non-object messages, answers
to unknown ids and unknown notifications are counted (``ignored``) and dropped; oversized frames end
the stream (``transport.MAX_MESSAGE_BYTES``); every request has a deadline.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectSendStream

from mini_codex.environments.remote_process import (
    ExecutorGone,
    ExecutorRequestError,
    RemoteProcess,
)
from mini_codex.environments.transport import MessageStream, TransportClosed
from mini_codex.protocol.exec_server_codec import b64decode, b64encode, file_uri

__all__ = [
    "ExecServerClient",
    "ExecutorGone",
    "ExecutorRequestError",
    "ProcessResult",
    "RemoteProcess",
]

DEFAULT_REQUEST_TIMEOUT_S = 30.0


class ProcessResult(msgspec.Struct):
    output: bytes
    exit_code: int | None
    """None: the process did not exit within the timeout (it was terminated)."""
    timed_out: bool = False


class ExecServerClient:
    def __init__(self, stream: MessageStream, *, client_name: str = "mini-codex") -> None:
        self.stream = stream
        self.client_name = client_name
        self.info: dict[str, Any] = {}
        """``environmentInfo`` from ``initialize`` (shell, cwd, …)."""
        self.ignored = 0
        """Messages dropped as malformed or unexpected."""
        self.closed_reason: str | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, MemoryObjectSendStream[dict[str, Any]]] = {}
        self._processes: dict[str, RemoteProcess] = {}
        self._done = anyio.Event()

    @property
    def connected(self) -> bool:
        return not self._done.is_set()

    async def run(self) -> None:
        """Read messages until the stream ends; then fail everything pending."""
        try:
            while True:
                text = await self.stream.receive()
                self._dispatch(text)
        except TransportClosed as exc:
            self.closed_reason = str(exc)
        finally:
            self._done.set()
            for sender in self._pending.values():
                sender.close()
            self._pending.clear()
            for process in list(self._processes.values()):
                process.on_closed()
            with anyio.CancelScope(shield=True):
                await self.stream.aclose()

    def _dispatch(self, text: str) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            self.ignored += 1
            return
        if not isinstance(message, dict):
            self.ignored += 1
            return
        if "id" in message and "method" not in message:
            sender = self._pending.pop(message["id"], None) if _hashable(message["id"]) else None
            if sender is None:
                self.ignored += 1
                return
            sender.send_nowait(message)
            sender.close()
            return
        params = message.get("params")
        if "id" in message or not isinstance(params, dict):
            self.ignored += 1  # the executor sends us no requests
            return
        self._notification(str(message.get("method")), params)

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        process = self._processes.get(str(params.get("processId")))
        if process is None:
            self.ignored += 1
            return
        try:
            match method:
                case "process/output":
                    process.on_output(int(params["seq"]), b64decode(str(params["chunk"])))
                case "process/exited":
                    process.on_exited(int(params["exitCode"]))
                case "process/closed":
                    process.on_closed()
                case _:
                    self.ignored += 1
        except (KeyError, ValueError, TypeError):
            self.ignored += 1

    async def request(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
    ) -> dict[str, Any]:
        if self._done.is_set():
            raise ExecutorGone(self.closed_reason or "the executor connection is closed")
        request_id = next(self._ids)
        sender, receiver = anyio.create_memory_object_stream[dict[str, Any]](1)
        self._pending[request_id] = sender
        try:
            with anyio.fail_after(timeout_s):
                await self.stream.send(
                    json.dumps({"id": request_id, "method": method, "params": dict(params)})
                )
                try:
                    reply = await receiver.receive()
                except anyio.EndOfStream:
                    raise ExecutorGone(self.closed_reason or "the executor went away") from None
        except TimeoutError:
            raise ExecutorGone(f"{method}: no answer within {timeout_s:g} s") from None
        except TransportClosed as exc:
            raise ExecutorGone(str(exc)) from exc
        finally:
            self._pending.pop(request_id, None)
            sender.close()
            receiver.close()
        error = reply.get("error")
        if error is not None:
            code = error.get("code", -32603) if isinstance(error, dict) else -32603
            text = error.get("message", str(error)) if isinstance(error, dict) else str(error)
            raise ExecutorRequestError(method, int(code), str(text))
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    async def notify(self, method: str, params: Mapping[str, Any]) -> None:
        try:
            await self.stream.send(json.dumps({"method": method, "params": dict(params)}))
        except TransportClosed as exc:
            raise ExecutorGone(str(exc)) from exc

    async def initialize(self, *, timeout_s: float) -> dict[str, Any]:
        result = await self.request(
            "initialize",
            {"clientName": self.client_name, "resumeSessionId": None},
            timeout_s=timeout_s,
        )
        await self.notify("initialized", {})
        info = result.get("environmentInfo")
        self.info = info if isinstance(info, dict) else {}
        if not self.info:
            self.info = await self.request("environment/info", {}, timeout_s=timeout_s)
        return self.info

    async def start_process(
        self,
        argv: Sequence[str],
        cwd: str,
        *,
        env: Mapping[str, str] | None = None,
        sandbox: Mapping[str, Any] | None = None,
        pipe_stdin: bool = False,
        tty: bool = False,
    ) -> RemoteProcess:
        """``process/start`` of ``argv`` in ``cwd`` with the executor's own environment (plus
        ``env``); the handle collects its output (``remote_process.RemoteProcess``)."""
        process_id = f"mini-{uuid.uuid4()}"
        process = self._processes[process_id] = RemoteProcess(self, process_id)
        try:
            await self.request(
                "process/start",
                {
                    "processId": process_id,
                    "argv": list(argv),
                    "cwd": file_uri(cwd),
                    "envPolicy": {
                        "inherit": "all",
                        "ignoreDefaultExcludes": True,
                        "exclude": [],
                        "set": {},
                        "includeOnly": [],
                    },
                    "env": dict(env or {}),
                    "tty": tty,
                    "pipeStdin": pipe_stdin,
                    "sandbox": dict(sandbox) if sandbox is not None else None,
                },
            )
        except BaseException:
            self.forget(process_id)
            raise
        return process

    def forget(self, process_id: str) -> None:
        self._processes.pop(process_id, None)

    async def run_process(
        self,
        argv: Sequence[str],
        cwd: str,
        *,
        env: Mapping[str, str] | None = None,
        sandbox: Mapping[str, Any] | None = None,
        timeout_s: float = 60.0,
    ) -> ProcessResult:
        """Start ``argv``, wait for it to close (at most ``timeout_s``, then terminate it) and
        return its output."""
        process = await self.start_process(argv, cwd, env=env, sandbox=sandbox)
        try:
            closed = await process.wait_closed(timeout_s)
            if process.gone:
                raise ExecutorGone(self.closed_reason or "the executor went away mid-command")
            if not closed:
                await self.request(
                    "process/terminate", {"processId": process.process_id}, timeout_s=5
                )
            return ProcessResult(process.take_output(), process.exit_code, not closed)
        finally:
            self.forget(process.process_id)

    async def read_file(self, path: str) -> bytes:
        result = await self.request("fs/readFile", {"path": file_uri(path), "sandbox": None})
        return b64decode(str(result.get("dataBase64", "")))

    async def write_file(self, path: str, data: bytes) -> None:
        params = {"path": file_uri(path), "dataBase64": b64encode(data), "sandbox": None}
        await self.request("fs/writeFile", params)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.stream.aclose()


def _hashable(value: object) -> bool:
    return isinstance(value, (int, str))
