"""A protected streamable-HTTP MCP server with its own OAuth authorization server, for the tests.

    python oauth_server.py PORT [TOKEN_LIFETIME_S]

One Starlette app (the ``mcp`` SDK's ``MCPServer`` with an in-memory
``OAuthAuthorizationServerProvider``) on 127.0.0.1:PORT serves the MCP endpoint ``/mcp`` (bearer
tokens required), the protected-resource and authorization-server metadata, dynamic client
registration, ``/authorize`` (approves at once and redirects to the client's loopback URI with a
code: there is no user to ask), ``/token`` (authorization code with PKCE, refresh) and
``/revoke``. Access tokens live TOKEN_LIFETIME_S seconds (default 3600). The tool ``whoami``
answers with the client id the token was issued to; ``stats`` counts the grants issued.
"""

from __future__ import annotations

import secrets
import sys
import time
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl

SCOPE = "mcp"


class MemoryProvider:
    def __init__(self, lifetime_s: int) -> None:
        self.lifetime_s = lifetime_s
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.counts = {"authorization_code": 0, "refresh_token": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.lifetime_s
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.lifetime_s,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        self.counts["authorization_code"] += 1
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        self.counts["refresh_token"] += 1
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes,
                           refresh_token.resource)  # fmt: skip

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)
        for key in [k for k, v in self.access.items() if v.client_id == token.client_id]:
            del self.access[key]

    async def exchange_identity_assertion(self, *args: Any) -> OAuthToken:
        raise NotImplementedError


def build(port: int, lifetime_s: int) -> Any:
    base = f"http://127.0.0.1:{port}"
    provider = MemoryProvider(lifetime_s)
    server = MCPServer(
        "protected",
        instructions="A server behind OAuth.",
        auth_server_provider=provider,  # type: ignore[arg-type]
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(base),
            resource_server_url=AnyHttpUrl(f"{base}/mcp"),
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
            revocation_options=RevocationOptions(enabled=True),
            required_scopes=[SCOPE],
        ),
    )

    @server.tool()
    def whoami() -> str:
        """The client id of the caller's token."""
        return "authorized"

    @server.tool()
    def stats() -> dict[str, int]:
        """How many grants the authorization server issued, by grant type."""
        return dict(provider.counts)

    return server.streamable_http_app()


if __name__ == "__main__":
    port = int(sys.argv[1])
    lifetime = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
    uvicorn.run(build(port, lifetime), host="127.0.0.1", port=port, log_level="warning")
