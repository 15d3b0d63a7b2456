"""One app-server connection: the handshake, the dispatch table, and its lifetime.

``serve_connection(host, lines, write)`` reads messages until the client's input ends, answering
each request in order (a handler never waits for the client, so approvals answered meanwhile are
delivered). Before ``initialize`` every request is refused ("Not initialized", ``-32600``, as
Codex says it); a second ``initialize`` is "Already initialized". A bad line, an unknown method
or bad params get their error and the server keeps serving. When the input ends, every server
request still waiting is a denial, every thread is interrupted and its session closed (rollouts
flushed, child processes ended), then the queued messages are written and it returns.
"""

from __future__ import annotations

import logging
import platform
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from mini_codex.app_server.handlers import Handler, ThreadHandlers
from mini_codex.app_server.methods import CODEX_METHODS
from mini_codex.app_server.params import Params
from mini_codex.app_server.rpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Connection,
    Incoming,
    RpcError,
    parse_message,
)
from mini_codex.app_server.sessions import HostValues
from mini_codex.app_server.transport import TooLarge
from mini_codex.errors import MiniCodexError

__all__ = ["AppServer", "serve_connection"]

JsonDict = dict[str, Any]
log = logging.getLogger("mini_codex.app_server")


class AppServer:
    def __init__(self, host: HostValues, connection: Connection, threads: ThreadHandlers) -> None:
        self.host = host
        self.connection = connection
        self.threads = threads
        self.initialized = False
        self.client_name = ""
        self._table: dict[str, Handler] = {
            "initialize": self.initialize,
            "model/list": self.model_list,
            "config/read": self.config_read,
            **threads.table(),
        }

    # --- messages --------------------------------------------------------------------------------

    async def handle(self, line: bytes | TooLarge) -> None:
        if isinstance(line, TooLarge):
            text = f"Invalid request: message of {line.size} bytes is over the {line.limit} limit"
            self.connection.respond_error(None, RpcError(INVALID_REQUEST, text))
            return
        try:
            message = parse_message(line)
        except RpcError as exc:
            self.connection.respond_error(exc.request_id, exc)
            return
        match message.kind:
            case "response":
                self.connection.deliver(message)
            case "notification":
                if message.method == "initialized":
                    self.initialized = self.initialized or bool(self.client_name)
            case _:
                await self._request(message)

    async def _request(self, message: Incoming) -> None:
        assert message.id is not None
        try:
            result = await self._dispatch(message)
        except RpcError as exc:
            self.connection.respond_error(message.id, exc)
        except MiniCodexError as exc:
            self.connection.respond_error(message.id, RpcError(INVALID_REQUEST, str(exc)))
        except Exception as exc:
            log.exception("request %s (%s) failed", message.id, message.method)
            error = RpcError(INTERNAL_ERROR, f"Internal error in {message.method}: {exc}")
            self.connection.respond_error(message.id, error)
        else:
            self.connection.respond(message.id, result)

    async def _dispatch(self, message: Incoming) -> JsonDict:
        method = message.method
        if method != "initialize" and not self.client_name:
            raise RpcError(INVALID_REQUEST, "Not initialized")
        handler = self._table.get(method)
        if handler is None:
            if method in CODEX_METHODS:
                raise RpcError(
                    METHOD_NOT_FOUND, f"`{method}` is not implemented by mini-codex app-server"
                )
            raise RpcError(METHOD_NOT_FOUND, f"method not found: `{method}`")
        return await handler(Params(method, message.params))

    # --- handshake and settings ------------------------------------------------------------------

    async def initialize(self, params: Params) -> JsonDict:
        if self.client_name:
            raise RpcError(INVALID_REQUEST, "Already initialized")
        info = params.obj("clientInfo")
        if info is None or not isinstance(info.get("name"), str):
            raise RpcError(-32602, "Invalid params for initialize: missing `clientInfo.name`")
        self.client_name = info["name"]
        version = info.get("version")
        client = f"{self.client_name}; {version}" if isinstance(version, str) else self.client_name
        system = f"{platform.system()} {platform.release()}; {platform.machine()}"
        return {
            "userAgent": f"{self.host.user_agent} ({system}) ({client})",
            "codexHome": str(self.host.home),
            "platformFamily": "windows" if sys.platform == "win32" else "unix",
            "platformOs": {"darwin": "macos", "win32": "windows"}.get(sys.platform, "linux"),
        }

    async def model_list(self, params: Params) -> JsonDict:
        config = self.host.load_config({})
        model = config.model
        efforts = ["low", "medium", "high"]
        return {
            "data": [
                {
                    "id": model,
                    "model": model,
                    "displayName": model,
                    "description": f"The configured model ({config.model_provider} provider)",
                    "hidden": False,
                    "isDefault": True,
                    "defaultReasoningEffort": config.model_reasoning_effort or "medium",
                    "supportedReasoningEfforts": [
                        {"reasoningEffort": effort, "description": effort} for effort in efforts
                    ],
                    "inputModalities": ["text", "image"],
                }
            ],
            "nextCursor": None,
        }

    async def config_read(self, params: Params) -> JsonDict:
        config = self.host.load_config({})
        return {"config": config.model_dump(mode="json", exclude_none=True), "origins": {}}


async def serve_connection(
    host: HostValues,
    lines: AsyncIterator[bytes | TooLarge],
    write: Callable[[bytes], Awaitable[None]],
    *,
    observer: Callable[[JsonDict], None] | None = None,
) -> None:
    """Serve one client until its input ends (see the module docs)."""
    connection = Connection(write)
    connection.observer = observer
    async with anyio.create_task_group() as writer_group:
        writer_group.start_soon(connection.run_writer)
        async with anyio.create_task_group() as thread_group:
            threads = ThreadHandlers(host, connection, thread_group)
            server = AppServer(host, connection, threads)
            try:
                async for line in lines:
                    await server.handle(line)
            finally:
                connection.client_gone()
                with anyio.CancelScope(shield=True):
                    await threads.close_all()
        connection.close()
