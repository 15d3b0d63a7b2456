"""The transports of an MCP connection: a stdio child process, or streamable HTTP.

``StdioHttpClientFactory`` opens a connected SDK ``Client`` for one server config: a stdio child
with an allow-listed environment plus ``env``/``env_vars``, or streamable HTTP with ``headers``,
``http_headers``, ``env_http_headers`` and either a bearer token (``bearer_token_env_var``) or the
OAuth login stored by ``mini-codex mcp login`` (``oauth.py``). Every client declares the
elicitation capability and answers through ``elicitation.py``. ``ClientFactory`` is the protocol
tests implement to connect in-process servers.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TextIO

import httpx2
import mcp_types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from mini_codex._version import __version__
from mini_codex.config import McpServerConfig
from mini_codex.mcp.elicitation import ElicitationHandler, ElicitationRequest, settle_answer
from mini_codex.mcp.errors import McpStartupError, is_error
from mini_codex.mcp.oauth import McpAuthError, login_hint, session_auth
from mini_codex.mcp.oauth_store import OAuthStore

__all__ = ["CLIENT_INFO", "ClientFactory", "StdioHttpClientFactory"]

_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
CLIENT_INFO = mcp_types.Implementation(name="mini-codex", version=__version__)


class ClientFactory(Protocol):
    """Opens a connected SDK ``Client`` for one server (tests pass in-process servers).

    ``errlog`` is the connection's server log: a stdio child's stderr, or diagnostic lines.
    """

    def __call__(
        self, server: str, config: McpServerConfig, errlog: TextIO | None
    ) -> AbstractAsyncContextManager[Client]: ...


class StdioHttpClientFactory:
    """The real transports: a stdio child process, or streamable HTTP with headers/bearer token.

    ``environ`` is the process environment (given by ``cli/``), read only for the variables a
    config names (``env_vars``, ``bearer_token_env_var``, ``env_http_headers``). ``elicitation``
    answers the servers' elicitation requests (None: they are declined, ``elicitation.py``);
    ``on_warning`` hears why an answer was not sent. An HTTP server without
    ``bearer_token_env_var`` uses the OAuth login stored under ``home`` (``oauth.py``); a 401
    during startup fails the connection with ``McpAuthError`` (one line: "needs login").
    """

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        *,
        home: Path | None = None,
        elicitation: ElicitationHandler | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.environ: Mapping[str, str] = environ or {}
        self.home = home
        """``$MINI_CODEX_HOME``: where ``mcp login`` stored OAuth tokens (None: no OAuth)."""
        self.elicitation = elicitation
        self.on_warning = on_warning

    def elicitation_callback(self, server: str) -> Any:
        """The SDK callback of one server's client (the capability is always declared)."""

        async def answer(context: Any, params: Any) -> mcp_types.ElicitResult:
            del context
            is_url = isinstance(params, mcp_types.ElicitRequestURLParams)
            request = ElicitationRequest(
                server=server,
                message=params.message,
                mode="url" if is_url else "form",
                requested_schema={} if is_url else dict(params.requested_schema),
                url=params.url if is_url else None,
                elicitation_id=params.elicitation_id if is_url else None,
                meta=dict(params.meta) if params.meta is not None else None,
            )
            settled = await settle_answer(request, self.elicitation, self.on_warning)
            return mcp_types.ElicitResult(action=settled.action, content=settled.content)

        return answer

    def __call__(
        self, server: str, config: McpServerConfig, errlog: TextIO | None
    ) -> AbstractAsyncContextManager[Client]:
        return self._open(server, config, errlog)

    @asynccontextmanager
    async def _open(
        self, server: str, config: McpServerConfig, errlog: TextIO | None
    ) -> AsyncIterator[Client]:
        if config.command is not None:
            env = {name: self.environ[name] for name in config.env_vars if name in self.environ}
            env.update(config.env)
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=env, cwd=config.cwd
            )
            transport = stdio_client(params, errlog=errlog if errlog is not None else sys.stderr)
            async with Client(
                transport,
                client_info=CLIENT_INFO,
                cache=None,
                elicitation_callback=self.elicitation_callback(server),
            ) as client:
                yield client
            return
        assert config.url is not None  # McpServerConfig guarantees one transport
        headers = {**config.http_headers, **config.headers}
        if config.bearer_token_env_var is not None:
            token = self.environ.get(config.bearer_token_env_var)
            if not token:
                raise McpStartupError(
                    server,
                    f"MCP server {server!r} failed to start: environment variable "
                    f"{config.bearer_token_env_var} (bearer_token_env_var) is not set",
                )
            headers["Authorization"] = f"Bearer {token}"
        for header, variable in config.env_http_headers.items():
            value = self.environ.get(variable)
            if value:
                headers[header] = value

        auth: httpx2.Auth | None = None
        if config.bearer_token_env_var is None and self.home is not None:
            store = OAuthStore(self.home, server, config.url)
            if store.logged_in:
                auth = session_auth(store)
        unauthorized = False

        async def log_error_status(response: httpx2.Response) -> None:
            nonlocal unauthorized
            if response.status_code == 401:
                unauthorized = True
            if response.status_code >= 400 and errlog is not None:
                errlog.write(
                    f"HTTP {response.status_code} {response.reason_phrase} "
                    f"from {response.request.url}\n"
                )
                errlog.flush()

        connected = False
        try:
            async with httpx2.AsyncClient(
                headers=headers,
                timeout=_HTTP_TIMEOUT,
                event_hooks={"response": [log_error_status]},
                auth=auth,
            ) as http:
                transport = streamable_http_client(config.url, http_client=http)
                async with Client(
                    transport,
                    client_info=CLIENT_INFO,
                    cache=None,
                    elicitation_callback=self.elicitation_callback(server),
                ) as client:
                    connected = True
                    yield client
        except (Exception, BaseExceptionGroup) as exc:
            oauth = config.bearer_token_env_var is None and self.home is not None
            if connected or not unauthorized or not oauth or not is_error(exc):
                raise
            hint = login_hint(server, had_login=auth is not None)
            raise McpAuthError(server, hint) from exc
