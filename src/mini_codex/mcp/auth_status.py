"""How a configured MCP server authenticates, as ``codex mcp list`` reports it (``auth_status``).

The rules (Codex 0.169's, checked against ``tests/fixtures/codex_mcp_list/``):

* a stdio server → ``unsupported``;
* ``bearer_token_env_var`` set, or an ``Authorization`` header configured → ``bearer_token``;
* an OAuth login stored for the server (``mini-codex mcp login``) → ``o_auth``;
* otherwise the server's OAuth metadata is looked for (RFC 8414 paths:
  ``/.well-known/oauth-authorization-server/<path>``, ``/<path>/.well-known/…``, then the root
  one; each a GET with ``MCP-Protocol-Version: 2024-11-05`` and the server's headers, 5 s each):
  metadata with an authorization and a token endpoint → ``not_logged_in``; every path answered
  without it → ``unsupported``; a path that could not be asked (refused, timed out) and none
  found → ``unknown``.

The servers are probed concurrently. Nothing here reads the environment: the variables the
config names are passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import anyio
import httpx2
import orjson

from mini_codex.config import McpServerConfig
from mini_codex.mcp.oauth_store import OAuthStore

__all__ = ["AUTH_LABELS", "AuthStatus", "auth_statuses", "discovery_paths"]

AuthStatus = Literal["unsupported", "not_logged_in", "bearer_token", "o_auth", "unknown"]
AUTH_LABELS: dict[AuthStatus, str] = {
    "unsupported": "Unsupported",
    "not_logged_in": "Not logged in",
    "bearer_token": "Bearer token",
    "o_auth": "OAuth",
    "unknown": "Unknown",
}
DISCOVERY_TIMEOUT_S = 5.0
_WELL_KNOWN = "/.well-known/oauth-authorization-server"


def discovery_paths(path: str) -> list[str]:
    """The metadata paths tried for an endpoint path, in order (no duplicates)."""
    trimmed = path.strip("/")
    if not trimmed:
        return [_WELL_KNOWN]
    found: list[str] = []
    for candidate in (f"{_WELL_KNOWN}/{trimmed}", f"/{trimmed}{_WELL_KNOWN}", _WELL_KNOWN):
        if candidate not in found:
            found.append(candidate)
    return found


def _headers(config: McpServerConfig, environ: Mapping[str, str]) -> dict[str, str]:
    headers = {**config.http_headers, **config.headers}
    for header, variable in config.env_http_headers.items():
        value = environ.get(variable)
        if value:
            headers[header] = value
    return headers


def _has_endpoints(body: bytes) -> bool:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    return (
        isinstance(data, dict)
        and isinstance(data.get("authorization_endpoint"), str)
        and isinstance(data.get("token_endpoint"), str)
    )


async def _discover(http: httpx2.AsyncClient, url: str, headers: dict[str, str]) -> AuthStatus:
    base = httpx2.URL(url)
    failed = False
    for path in discovery_paths(base.path):
        try:
            response = await http.get(
                base.copy_with(path=path, query=None),
                headers={**headers, "MCP-Protocol-Version": "2024-11-05"},
            )
        except httpx2.HTTPError:
            failed = True
            continue
        if response.status_code == 200 and _has_endpoints(response.content):
            return "not_logged_in"
    return "unknown" if failed else "unsupported"


async def _status(
    http: httpx2.AsyncClient,
    name: str,
    config: McpServerConfig,
    home: Path,
    environ: Mapping[str, str],
) -> AuthStatus:
    if config.url is None:
        return "unsupported"
    headers = _headers(config, environ)
    if config.bearer_token_env_var is not None or any(
        key.lower() == "authorization" for key in headers
    ):
        return "bearer_token"
    if OAuthStore(home, name, config.url).logged_in:
        return "o_auth"
    return await _discover(http, config.url, headers)


async def auth_statuses(
    servers: Mapping[str, McpServerConfig], home: Path, environ: Mapping[str, str]
) -> dict[str, AuthStatus]:
    """Server name → its auth status (see the module docstring); probed concurrently."""
    found: dict[str, AuthStatus] = {}
    async with httpx2.AsyncClient(timeout=DISCOVERY_TIMEOUT_S) as http:

        async def one(name: str, config: McpServerConfig) -> None:
            found[name] = await _status(http, name, config, home, environ)

        async with anyio.create_task_group() as group:
            for name, config in servers.items():
                group.start_soon(one, name, config)
    return {name: found[name] for name in servers}
