"""JSON-RPC as Codex's app-server speaks it: the envelope, the error codes, one connection.

Messages are JSON objects without the ``"jsonrpc"`` field: a request ``{id, method, params?}``, a
notification ``{method, params?}``, a response ``{id, result}`` or ``{id, error: {code, message,
data?}}``. ``Connection`` serializes every outgoing message through one queue (so the order a
thread's notifications were produced in is the order they are written in), numbers the requests
the server sends (approvals) and matches the client's responses to them. When the client goes
away, every request still waiting is answered with ``ClientGone``.

Codex answers an unknown method and bad params with ``-32600`` ("Invalid request: …", its
deserializer speaks first); we answer a method of Codex's protocol that we do not implement with
``-32601`` naming it, bad params with ``-32602``, a line that is not JSON with ``-32700`` and
``id: null`` (JSON-RPC 2.0; Codex logs it and answers nothing), and a failure inside a handler
with ``-32603``.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "ClientGone",
    "Connection",
    "Incoming",
    "RpcError",
    "parse_message",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

JsonDict = dict[str, Any]
RequestId = str | int


class RpcError(Exception):
    """An error answer: ``code`` and a one-line ``message``."""

    def __init__(
        self, code: int, message: str, data: Any = None, *, request_id: RequestId | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.request_id = request_id
        """The id of the request that failed to parse, when it could be read."""

    def to_json(self) -> JsonDict:
        error: JsonDict = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ClientGone(Exception):
    """The client disconnected before answering a server request."""


@dataclass(frozen=True)
class Incoming:
    """One decoded client message."""

    kind: str
    """``request``, ``notification`` or ``response``."""
    method: str = ""
    id: RequestId | None = None
    params: Any = None
    result: Any = None
    error: JsonDict | None = None


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse_message(line: bytes) -> Incoming:
    """Decode one line; ``RpcError`` (with the request id when it could be read) otherwise."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise RpcError(PARSE_ERROR, f"Parse error: {exc}") from None
    if not isinstance(value, dict):
        raise RpcError(INVALID_REQUEST, "Invalid request: a message must be a JSON object")
    raw_id = value.get("id")
    if "method" in value:
        method = value["method"]
        if not isinstance(method, str):
            raise _with_id(raw_id, "Invalid request: `method` must be a string")
        if "id" not in value:
            return Incoming("notification", method=method, params=value.get("params"))
        if not _valid_id(raw_id):
            raise RpcError(INVALID_REQUEST, "Invalid request: `id` must be a string or an integer")
        return Incoming("request", method=method, id=raw_id, params=value.get("params"))
    if _valid_id(raw_id) and ("result" in value or "error" in value):
        error = value.get("error")
        return Incoming(
            "response",
            id=raw_id,
            result=value.get("result"),
            error=error if isinstance(error, dict) else None,
        )
    raise _with_id(raw_id, "Invalid request: neither a request, a notification nor a response")


def _with_id(raw_id: Any, message: str) -> RpcError:
    return RpcError(INVALID_REQUEST, message, request_id=raw_id if _valid_id(raw_id) else None)


@dataclass
class _Waiter:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: JsonDict | None = None
    gone: bool = False


class Connection:
    """One client: an ordered outgoing queue, server requests and their answers."""

    def __init__(self, write: Callable[[bytes], Awaitable[None]]) -> None:
        self._write = write
        self._send: MemoryObjectSendStream[bytes]
        self._receive: MemoryObjectReceiveStream[bytes]
        self._send, self._receive = anyio.create_memory_object_stream[bytes](math.inf)
        self._waiting: dict[RequestId, _Waiter] = {}
        self._next_id = 0
        self.closed = False
        """The client cannot be written to any more."""
        self.gone = False
        """The client's input ended: a server request is answered ``ClientGone`` at once."""
        self._after: list[tuple[str, JsonDict]] = []
        self.observer: Callable[[JsonDict], None] | None = None
        """Sees every outgoing message (tests and the load benchmark)."""

    # --- outgoing --------------------------------------------------------------------------------

    def _put(self, message: JsonDict) -> None:
        if self.observer is not None:
            self.observer(message)
        if self.closed:
            return
        try:
            self._send.send_nowait(orjson.dumps(message) + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def notify(self, method: str, params: JsonDict) -> None:
        self._put({"method": method, "params": params})

    def respond(self, request_id: RequestId, result: Any) -> None:
        self._put({"id": request_id, "result": result})
        after, self._after = self._after, []
        for method, params in after:
            self.notify(method, params)

    def after_response(self, method: str, params: JsonDict) -> None:
        """Send this notification right after the response being prepared (``thread/started``
        follows the ``thread/start`` response, as in Codex)."""
        self._after.append((method, params))

    def respond_error(self, request_id: RequestId | None, error: RpcError) -> None:
        self._after.clear()
        self._put({"id": request_id, "error": error.to_json()})

    async def request(self, method: str, params: JsonDict) -> Any:
        """Send a server request and wait for the client's answer (``ClientGone`` if it leaves;
        ``RpcError`` for an error answer)."""
        if self.gone or self.closed:
            raise ClientGone
        request_id = self._next_id
        self._next_id += 1
        waiter = _Waiter()
        self._waiting[request_id] = waiter
        self._put({"id": request_id, "method": method, "params": params})
        try:
            await waiter.done.wait()
        finally:
            self._waiting.pop(request_id, None)
        if waiter.gone:
            raise ClientGone
        if waiter.error is not None:
            code = int(waiter.error.get("code", INTERNAL_ERROR))
            raise RpcError(code, str(waiter.error), data=waiter.error)
        return waiter.result

    def next_request_id(self) -> int:
        """The id the next server request will get (for ``serverRequest/resolved``)."""
        return self._next_id

    def deliver(self, message: Incoming) -> None:
        """A client response to one of our requests (unknown ids are ignored)."""
        assert message.id is not None
        waiter = self._waiting.get(message.id)
        if waiter is None:
            return
        waiter.result, waiter.error = message.result, message.error
        waiter.done.set()

    # --- lifetime --------------------------------------------------------------------------------

    async def run_writer(self) -> None:
        """Write queued messages in order until ``close``; then flush what is left."""
        async with self._receive:
            async for data in self._receive:
                batch = [data]
                while True:  # everything queued now goes out in one write
                    try:
                        batch.append(self._receive.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                try:
                    await self._write(b"".join(batch))
                except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    self.closed = True
                    self.client_gone()

    def client_gone(self) -> None:
        """The client left: every waiting server request fails with ``ClientGone``."""
        self.gone = True
        for waiter in list(self._waiting.values()):
            waiter.gone = True
            waiter.done.set()

    def close(self) -> None:
        """No more messages: the writer ends after writing the queue."""
        self._send.close()
