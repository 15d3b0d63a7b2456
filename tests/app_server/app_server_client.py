"""A small JSON-RPC client for app-servers on stdio (ours and the real ``codex app-server``).

Messages are newline-delimited JSON without the ``"jsonrpc"`` field. A reader thread queues every
line the server writes (``messages`` keeps them all, so a test can validate each one against the
schema); ``request`` sends and waits for the response with the same id while keeping the
notifications and server requests that arrive meanwhile for ``next_message``/``wait_for``.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

JsonDict = dict[str, Any]

__all__ = ["AppServerClient", "RpcError"]


class RpcError(Exception):
    def __init__(self, error: JsonDict) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


class AppServerClient:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
        self.messages: list[JsonDict] = []
        """Every message the server wrote, in order (the raw line when it was not JSON)."""
        self.raw_lines: list[bytes] = []
        self._inbox: queue.Queue[JsonDict | None] = queue.Queue()
        self._pending: list[JsonDict] = []
        self._next_id = 0
        self.sent_methods: dict[Any, str] = {}
        """The method of every request id this client sent (to validate the responses)."""
        self.stderr_lines: list[str] = []
        self._threads = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # --- I/O -------------------------------------------------------------------------------------

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.raw_lines.append(line)
            message = json.loads(line)
            self.messages.append(message)
            self._inbox.put(message)
        self._inbox.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr_lines.append(line.decode(errors="replace"))

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: JsonDict) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def notify(self, method: str, params: JsonDict | None = None) -> None:
        message: JsonDict = {"method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def respond(self, request_id: Any, result: JsonDict) -> None:
        self.send({"id": request_id, "result": result})

    # --- waiting ---------------------------------------------------------------------------------

    def _take(self, timeout: float) -> JsonDict:
        try:
            message = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message from the server in {timeout} s") from None
        if message is None:
            self._inbox.put(None)
            raise EOFError("the server closed its stdout")
        return message

    def response(self, request_id: Any, timeout: float = 30.0) -> JsonDict:
        """The response to ``request_id`` (other messages are kept for ``next_message``)."""
        deadline = time.monotonic() + timeout
        for index, message in enumerate(self._pending):
            if _is_response(message) and message.get("id") == request_id:
                return self._pending.pop(index)
        while True:
            message = self._take(max(0.01, deadline - time.monotonic()))
            if _is_response(message) and message.get("id") == request_id:
                return message
            self._pending.append(message)

    def request(
        self, method: str, params: JsonDict | None = None, *, timeout: float = 30.0
    ) -> JsonDict:
        """Send a request and return its ``result``; ``RpcError`` for an error response."""
        message = self.request_raw(method, params, timeout=timeout)
        if "error" in message:
            raise RpcError(message["error"])
        result: JsonDict = message["result"]
        return result

    def request_raw(
        self, method: str, params: JsonDict | None = None, *, timeout: float = 30.0
    ) -> JsonDict:
        self._next_id += 1
        request_id = self._next_id
        message: JsonDict = {"id": request_id, "method": method}
        self.sent_methods[request_id] = method
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(request_id, timeout)

    def next_message(self, timeout: float = 30.0) -> JsonDict:
        if self._pending:
            return self._pending.pop(0)
        return self._take(timeout)

    def wait_for(
        self, predicate: Callable[[JsonDict], bool], timeout: float = 30.0
    ) -> tuple[JsonDict, list[JsonDict]]:
        """The first message matching ``predicate`` and every message seen before it."""
        deadline = time.monotonic() + timeout
        seen: list[JsonDict] = []
        while True:
            message = self.next_message(max(0.01, deadline - time.monotonic()))
            if predicate(message):
                return message, seen
            seen.append(message)

    def wait_method(self, method: str, timeout: float = 30.0) -> tuple[JsonDict, list[JsonDict]]:
        return self.wait_for(lambda m: m.get("method") == method, timeout)

    # --- lifetime --------------------------------------------------------------------------------

    def initialize(self, name: str = "tests") -> JsonDict:
        result = self.request("initialize", {"clientInfo": {"name": name, "version": "1.0"}})
        self.notify("initialized")
        return result

    def close(self, timeout: float = 15.0) -> int:
        """Close stdin (EOF) and wait for the process; kill its group if it does not end."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait(5)
            raise
        finally:
            for thread in self._threads:
                thread.join(5)
            for stream in (self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()

    def __enter__(self) -> AppServerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            try:
                self.close()
            except subprocess.TimeoutExpired:
                pass


def _is_response(message: JsonDict) -> bool:
    return "method" not in message and ("result" in message or "error" in message)
