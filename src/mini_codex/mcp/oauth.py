"""OAuth for streamable-HTTP MCP servers: ``mini-codex mcp login NAME`` and the session's auth.

Both run on the ``mcp`` SDK's ``OAuthClientProvider`` (an ``httpx2.Auth``), with the tokens in an
``OAuthStore`` (``oauth_store.py``):

* ``login``: forget the old login, start a loopback listener on 127.0.0.1 (a free port; the
  redirect URI ``http://127.0.0.1:PORT/callback``), connect to the server; its 401 starts the
  SDK's flow: protected-resource and authorization-server metadata, dynamic client registration,
  the authorization URL (PKCE S256, ``state``) handed to ``show_url`` (the CLI prints it and
  opens the browser), the code read from the redirect, the token exchange. Tokens are stored.
* ``session_auth``: the stored tokens on every request; an expired access token is refreshed
  first (the refreshed tokens are stored); with no way to log in interactively, a rejected token
  ends the connection's start with ``McpAuthError`` ("needs login").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import httpx2
from anyio.streams.memory import MemoryObjectSendStream

from mini_codex._version import __version__
from mini_codex.mcp.errors import McpStartupError
from mini_codex.mcp.oauth_store import OAuthStore

if TYPE_CHECKING:
    from mcp.shared.auth import AuthorizationCodeResult

__all__ = ["McpAuthError", "login", "login_hint", "session_auth"]

_PAGE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n\r\n"
    b"mini-codex: logged in; you can close this page.\n"
)


class McpAuthError(McpStartupError):
    """The server wants a login (none stored, or the stored one was rejected)."""


def login_hint(server: str, *, had_login: bool) -> str:
    if had_login:
        return (
            f"MCP server {server!r} rejected its login (the token is wrong, expired or revoked): "
            f"run `mini-codex mcp login {server}`"
        )
    return f"MCP server {server!r} needs login: run `mini-codex mcp login {server}`"


def _metadata(redirect_uri: str) -> Any:
    from mcp.shared.auth import OAuthClientMetadata

    return OAuthClientMetadata.model_validate(
        {
            "redirect_uris": [redirect_uri],
            "client_name": "mini-codex",
            "software_id": "mini-codex",
            "software_version": __version__,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
    )


def _provider(store: OAuthStore, redirect_uri: str, **handlers: Any) -> httpx2.Auth:
    from mcp.client.auth import OAuthClientProvider

    class _StoredExpiry(OAuthClientProvider):
        async def _initialize(self) -> None:  # the SDK forgets the expiry across processes
            await super()._initialize()
            self.context.token_expiry_time = store.expires_at

    return _StoredExpiry(store.url, _metadata(redirect_uri), store, **handlers)


def session_auth(store: OAuthStore) -> httpx2.Auth:
    """The auth of a session's connection (no interactive login: see the module docstring)."""
    return _provider(store, "http://127.0.0.1/callback")


async def _serve_callback(
    listener: anyio.abc.Listener[anyio.abc.SocketStream],
    found: MemoryObjectSendStream[dict[str, str]],
) -> None:
    """Answer requests on the loopback listener; hand on the first with ``code`` or ``error``."""

    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            data = b""
            with anyio.move_on_after(10):
                while b"\r\n\r\n" not in data and len(data) < 65536:
                    chunk = await stream.receive(4096)
                    if not chunk:
                        break
                    data += chunk
            line = data.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split(" ")
            query = parse_qs(urlsplit(parts[1]).query) if len(parts) >= 2 else {}
            params = {key: values[0] for key, values in query.items() if values}
            await stream.send(_PAGE)
        if "code" in params or "error" in params:
            try:
                found.send_nowait(params)
            except anyio.WouldBlock:  # a second redirect: the first one counts
                pass

    await listener.serve(handle)


async def login(
    server: str,
    store: OAuthStore,
    *,
    show_url: Callable[[str], None],
    timeout_s: float = 300.0,
) -> None:
    """Run the authorization-code flow for ``server`` and store its tokens (see the docstring).

    Raises ``McpAuthError`` with one line when the flow fails or times out.
    """
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult

    store.delete()
    send, receive = anyio.create_memory_object_stream[dict[str, str]](1)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    redirect_uri = f"http://127.0.0.1:{port}/callback"

    async def redirect(url: str) -> None:
        show_url(url)

    async def callback() -> AuthorizationCodeResult:
        params = await receive.receive()
        if "error" in params:
            detail = params.get("error_description") or params["error"]
            raise McpAuthError(server, f"MCP server {server!r}: login refused: {detail}")
        return AuthorizationCodeResult(
            code=params["code"], state=params.get("state"), iss=params.get("iss")
        )

    auth = _provider(store, redirect_uri, redirect_handler=redirect, callback_handler=callback)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_serve_callback, listener, send)
            try:
                with anyio.fail_after(timeout_s):
                    async with httpx2.AsyncClient(auth=auth, timeout=30.0) as http:
                        transport = streamable_http_client(store.url, http_client=http)
                        async with Client(transport, cache=None) as client:
                            await client.list_tools()
            finally:
                group.cancel_scope.cancel()
    except* TimeoutError:
        raise McpAuthError(
            server, f"MCP server {server!r}: login timed out after {timeout_s:g} s"
        ) from None
    except* McpAuthError as group:
        raise group.exceptions[0] from None
    except* Exception as group:
        from mini_codex.mcp.errors import describe_exception

        raise McpAuthError(
            server, f"MCP server {server!r}: login failed: {describe_exception(group)}"
        ) from None
    finally:
        await listener.aclose()
    if not store.logged_in:
        raise McpAuthError(server, f"MCP server {server!r}: login finished without tokens")
