"""``mini-codex mcp list [--json]``: the configured servers as ``codex mcp list`` shows them.

The layout is Codex 0.169's (recorded in ``tests/fixtures/codex_mcp_list/``): servers sorted by
name; stdio servers in one table (Name, Command, Args, Env, Cwd, Status, Auth), streamable-HTTP
ones in a second (Name, Url, Bearer Token Env Var, Status, Auth), each column padded to its
widest cell and two spaces apart, a blank line between the tables; environment values are
masked (``KEY=*****``, the ``env`` keys sorted, then the ``env_vars`` names); ``-`` marks an empty
cell. Status is enabled/disabled, Auth comes from ``mcp/auth_status.py`` (an HTTP server's OAuth
metadata is probed, as Codex does).

``--json`` prints Codex's array (pretty-printed): ``name``, ``enabled``, ``disabled_reason``,
``transport`` (stdio: ``command``, ``args``, ``env``, ``env_vars``, ``cwd``; HTTP: ``url``,
``bearer_token_env_var``, ``http_headers``, ``env_http_headers``, ``http_headers_helper``),
``startup_timeout_sec`` / ``tool_timeout_sec`` (null unless set), ``auth_status``, and ours:
``required``, ``enabled_tools``, ``disabled_tools``.

``--connect`` (ours, not Codex's) also connects to every enabled server, each within its
``startup_timeout_sec``, and adds what it found: a Prompts column (a ready server's prompt names,
comma-separated; the UI offers each as ``/mcp__SERVER__PROMPT``) and a last State column
(``ready``, ``failed: ERROR``, ``needs login``; ``-`` for a disabled server); in the JSON
``prompts`` (``[{name, arguments}]`` of a ready server, else null), ``state`` and ``error``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mini_codex.config import McpServerConfig
from mini_codex.mcp.auth_status import AUTH_LABELS, AuthStatus

__all__ = [
    "connection_states",
    "list_json",
    "list_text",
    "live_details",
    "server_rows",
    "with_states",
]

States = Mapping[str, tuple[str, "str | None"]]
"""Server → (state, first error line) from connecting (``--connect``; disabled ones absent)."""
Prompts = Mapping[str, list[dict[str, Any]]]
"""Ready server → its prompts ``{name, arguments: [argument names]}`` (``--connect``)."""

_STDIO_COLUMNS = ("Name", "Command", "Args", "Env", "Cwd", "Status", "Auth")
_HTTP_COLUMNS = ("Name", "Url", "Bearer Token Env Var", "Status", "Auth")


def _set(server: McpServerConfig, key: str) -> Any:
    """A timeout as Codex shows it: its value when the config sets it, else null."""
    return getattr(server, key) if key in server.model_fields_set else None


def _server_json(name: str, server: McpServerConfig, auth: AuthStatus) -> dict[str, Any]:
    transport: dict[str, Any]
    if server.command is not None:
        transport = {
            "type": "stdio",
            "command": server.command,
            "args": list(server.args),
            "env": dict(server.env) or None,
            "env_vars": list(server.env_vars),
            "cwd": server.cwd,
        }
    else:
        transport = {
            "type": "streamable_http",
            "url": server.url,
            "bearer_token_env_var": server.bearer_token_env_var,
            "http_headers": {**server.http_headers, **server.headers} or None,
            "env_http_headers": dict(server.env_http_headers) or None,
            "http_headers_helper": None,
        }
    return {
        "name": name,
        "enabled": server.enabled,
        "disabled_reason": None,
        "transport": transport,
        "startup_timeout_sec": _set(server, "startup_timeout_sec"),
        "tool_timeout_sec": _set(server, "tool_timeout_sec"),
        "auth_status": auth,
        "required": server.required,
        "enabled_tools": list(server.enabled_tools) if server.enabled_tools is not None else None,
        "disabled_tools": list(server.disabled_tools),
    }


def list_json(
    servers: Mapping[str, McpServerConfig], auth: Mapping[str, AuthStatus]
) -> list[dict[str, Any]]:
    return [_server_json(name, servers[name], auth[name]) for name in sorted(servers)]


def with_states(
    listing: list[dict[str, Any]], states: States, prompts: Prompts | None = None
) -> list[dict[str, Any]]:
    """``--connect --json``: each entry gains ``state`` and ``error`` (disabled: null) and, given
    ``prompts``, ``prompts`` (a ready server's list, else null)."""
    return [
        {
            **entry,
            **({"prompts": prompts.get(entry["name"])} if prompts is not None else {}),
            "state": states[entry["name"]][0] if entry["name"] in states else None,
            "error": states[entry["name"]][1] if entry["name"] in states else None,
        }
        for entry in listing
    ]


def _state_cell(name: str, states: States) -> str:
    state, error = states.get(name, ("-", None))
    return f"{state}: {error}" if state == "failed" and error else state


def _prompts_cell(name: str, prompts: Prompts) -> str:
    return ", ".join(prompt["name"] for prompt in prompts.get(name) or ()) or "-"


def _table(columns: Sequence[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [list(columns), *rows]) for i in range(len(columns))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in [list(columns), *rows]
    ]


def _env_cell(server: McpServerConfig) -> str:
    masked = [f"{key}=*****" for key in sorted(server.env)]
    masked += [f"{name}=*****" for name in server.env_vars]
    return ", ".join(masked) or "-"


def list_text(
    servers: Mapping[str, McpServerConfig],
    auth: Mapping[str, AuthStatus],
    states: States | None = None,
    prompts: Prompts | None = None,
) -> str:
    """The two tables (see the module docstring), ending with a newline; with ``prompts``
    (``--connect``) a Prompts column, with ``states`` a last State column: ready, failed:
    ERROR, needs login (``-``: disabled)."""
    stdio: list[list[str]] = []
    http: list[list[str]] = []
    for name in sorted(servers):
        server = servers[name]
        status = "enabled" if server.enabled else "disabled"
        label = AUTH_LABELS[auth[name]]
        if server.command is not None:
            args = " ".join(server.args) or "-"
            cwd = server.cwd or "-"
            row = [name, server.command, args, _env_cell(server), cwd, status, label]
            stdio.append(row)
        else:
            bearer = server.bearer_token_env_var or "-"
            row = [name, server.url or "", bearer, status, label]
            http.append(row)
        if prompts is not None:
            row.append(_prompts_cell(name, prompts))
        if states is not None:
            row.append(_state_cell(name, states))
    extra: tuple[str, ...] = ("Prompts",) if prompts is not None else ()
    extra += ("State",) if states is not None else ()
    blocks = []
    if stdio:
        blocks.append("\n".join(_table((*_STDIO_COLUMNS, *extra), stdio)))
    if http:
        blocks.append("\n".join(_table((*_HTTP_COLUMNS, *extra), http)))
    return "\n\n".join(blocks) + "\n"


async def server_rows(
    servers: Mapping[str, McpServerConfig], environ: Mapping[str, str], home: Path
) -> list[dict[str, Any]]:
    """Connect to ``servers`` at once (each within its ``startup_timeout_sec``): one row per
    server with its state, first error line, tools, resources and prompts (``mcp status``)."""
    import anyio

    from mini_codex.mcp.client import StdioHttpClientFactory
    from mini_codex.mcp.runtime import McpRuntime

    factory = StdioHttpClientFactory(dict(environ), home=home)
    async with McpRuntime.open(servers, factory=factory) as runtime:
        published = runtime.published
        assert published is not None
        async with anyio.create_task_group() as group:
            for connection in published.connections.values():
                group.start_soon(connection.wait_settled)
        rows: list[dict[str, Any]] = []
        for name, connection in sorted(published.connections.items()):
            catalog = connection.catalog
            status = "needs login" if connection.needs_login else connection.status
            rows.append(
                {
                    "name": name,
                    "status": status,
                    "error": next(iter((connection.error or "").splitlines()), None),
                    "tools": sorted(tool.name for tool in catalog.tools) if catalog else [],
                    "resources": bool(catalog and catalog.resources),
                    "prompts": [
                        {
                            "name": prompt.name,
                            "arguments": [arg.name for arg in prompt.arguments or ()],
                        }
                        for prompt in (catalog.prompts if catalog else ())
                    ],
                }
            )
        return rows


async def connection_states(
    servers: Mapping[str, McpServerConfig], environ: Mapping[str, str], home: Path
) -> dict[str, tuple[str, str | None]]:
    """Server → (state, first error line) after connecting (``mcp list --connect``)."""
    rows = await server_rows(servers, environ, home)
    return {row["name"]: (row["status"], row["error"]) for row in rows}


async def live_details(
    servers: Mapping[str, McpServerConfig], environ: Mapping[str, str], home: Path
) -> tuple[dict[str, tuple[str, str | None]], dict[str, list[dict[str, Any]]]]:
    """``mcp list --connect``: the states and the ready servers' prompts after connecting."""
    rows = await server_rows(servers, environ, home)
    states = {row["name"]: (row["status"], row["error"]) for row in rows}
    prompts = {row["name"]: row["prompts"] for row in rows if row["status"] == "ready"}
    return states, prompts
