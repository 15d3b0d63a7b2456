"""Tool catalogs persisted between sessions, so a server's tools can be advertised while it starts.

One JSON file per server and launch configuration, under ``$MINI_CODEX_HOME/mcp_cache/``::

    <sanitized server name>-<16 hex digits of SHA-256(launch identity)>.json
    {"version": 1, "server": "everything", "catalog": {"title": ..., "tools": [...]}}

The launch identity covers what decides which program answers (command, args, cwd, env, url), so a
changed command never advertises the old program's tools. Files are replaced atomically; an
unreadable, foreign or corrupt file is treated as "no cache" (and rewritten on the next successful
start). The methods are synchronous and small: callers run them in a worker thread.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import orjson

from mini_codex.config import McpServerConfig
from mini_codex.mcp.catalog import ServerCatalog
from mini_codex.mcp.naming import sanitize_name_part

__all__ = ["CACHE_DIR_NAME", "CatalogCache", "launch_identity"]

CACHE_DIR_NAME = "mcp_cache"
_VERSION = 1


def launch_identity(server: str, config: McpServerConfig) -> str:
    """A stable digest of what determines the program behind ``server``."""
    identity = {
        "server": server,
        "command": config.command,
        "args": list(config.args),
        "cwd": config.cwd,
        "env": config.env,
        "env_vars": list(config.env_vars),
        "url": config.url,
    }
    encoded = orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(encoded).hexdigest()[:16]


class CatalogCache:
    """Catalog files in ``directory`` (created on first store)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path_for(self, server: str, config: McpServerConfig) -> Path:
        name = f"{sanitize_name_part(server)}-{launch_identity(server, config)}.json"
        return self.directory / name

    def load(self, server: str, config: McpServerConfig) -> ServerCatalog | None:
        try:
            data = orjson.loads(self.path_for(server, config).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            return None
        if data.get("server") != server:
            return None
        try:
            return ServerCatalog.from_json(data.get("catalog"))
        except ValueError:
            return None

    def store(self, server: str, config: McpServerConfig, catalog: ServerCatalog) -> None:
        """Write atomically; failures are ignored (the cache is an optimisation)."""
        payload = orjson.dumps(
            {"version": _VERSION, "server": server, "catalog": catalog.to_json()},
            option=orjson.OPT_SORT_KEYS,
        )
        path = self.path_for(server, config)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(payload)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return
