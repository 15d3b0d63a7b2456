"""OAuth tokens of streamable-HTTP MCP servers, stored under ``$MINI_CODEX_HOME/mcp_oauth/``.

One JSON file per server and URL, readable by the owner only (mode 0600, written atomically)::

    <sanitized server>-<12 hex digits of SHA-256(url)>.json
    {"version": 1, "server": ..., "url": ..., "tokens": {...}, "expires_at": <unix s> | null,
     "client_info": {...}}

``tokens`` is the OAuth token response (access token, refresh token, scope), ``expires_at`` when
the access token stops being valid (from ``expires_in``), ``client_info`` the dynamic client
registration. The store implements the ``mcp`` SDK's ``TokenStorage`` protocol. A corrupt or
foreign file reads as "not logged in". The system keyring is not used.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from mini_codex.mcp.naming import sanitize_name_part

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

__all__ = ["OAUTH_DIR_NAME", "OAuthStore"]

OAUTH_DIR_NAME = "mcp_oauth"
_VERSION = 1


class OAuthStore:
    """The stored login of one server (``TokenStorage`` for the SDK's OAuth provider)."""

    def __init__(self, home: Path, server: str, url: str) -> None:
        self.server = server
        self.url = url
        digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
        self.path = home / OAUTH_DIR_NAME / f"{sanitize_name_part(server)}-{digest}.json"

    # --- file ----------------------------------------------------------------------------------

    def read(self) -> dict[str, Any] | None:
        try:
            data = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            return None
        if data.get("server") != self.server or data.get("url") != self.url:
            return None
        return data

    def _write(self, data: dict[str, Any]) -> None:
        payload = orjson.dumps(
            {"version": _VERSION, "server": self.server, "url": self.url, **data},
            option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2,
        )
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.path.parent)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _update(self, **fields: Any) -> None:
        data = self.read() or {}
        data = {k: v for k, v in data.items() if k not in ("version", "server", "url")}
        data.update(fields)
        self._write(data)

    @property
    def logged_in(self) -> bool:
        data = self.read()
        return data is not None and isinstance(data.get("tokens"), dict)

    @property
    def expires_at(self) -> float | None:
        data = self.read()
        value = data.get("expires_at") if data is not None else None
        return float(value) if isinstance(value, int | float) else None

    def delete(self) -> bool:
        """Remove the stored login; False when there was none."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    # --- TokenStorage --------------------------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        data = self.read()
        tokens = data.get("tokens") if data is not None else None
        if not isinstance(tokens, dict):
            return None
        try:
            return OAuthToken.model_validate(tokens)
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._update(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        data = self.read()
        info = data.get("client_info") if data is not None else None
        if not isinstance(info, dict):
            return None
        try:
            return OAuthClientInformationFull.model_validate(info)
        except ValueError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._update(client_info=client_info.model_dump(mode="json", exclude_none=True))
