"""``mini-codex mcp add | remove | list``: the ``[mcp_servers.NAME]`` tables of config.toml.

The file is ``$MINI_CODEX_HOME/config.toml``; it is edited with tomlkit, so comments, ordering and
formatting of everything else survive, and replaced atomically. Every new table is validated as an
``McpServerConfig`` before anything is written; a malformed file is refused, never overwritten.

* ``mcp add NAME [--env K=V]... -- COMMAND [ARGS]...`` adds (or replaces) a stdio server;
  ``mcp add NAME --url URL [--bearer-token-env-var VAR]`` a streamable HTTP one.
* ``mcp remove NAME`` deletes the table (and an emptied ``[mcp_servers]``).
* ``mcp list [--json]`` shows the configured servers as ``codex mcp list`` does
  (``cli/mcp_list.py``: status and auth per server; one JSON array with ``--json``).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Annotated, Any

import orjson
import tomlkit
import typer
from pydantic import ValidationError
from tomlkit.exceptions import TOMLKitError

from mini_codex.cli.env import mini_codex_home
from mini_codex.config import Config, McpServerConfig
from mini_codex.errors import ConfigError, MiniCodexError

__all__ = ["add_server", "mcp_app", "remove_server", "servers_in"]

mcp_app = typer.Typer(
    name="mcp",
    help="Configure MCP servers (the mcp_servers tables of $MINI_CODEX_HOME/config.toml).",
    no_args_is_help=True,
    add_completion=False,
)

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def _parse(text: str, source: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from exc


def _dumps(document: tomlkit.TOMLDocument) -> str:
    text = tomlkit.dumps(document).rstrip("\n")  # tables are appended after a blank line
    return text + "\n" if text else ""


def add_server(
    text: str, name: str, server: dict[str, Any], *, source: str = "config.toml"
) -> tuple[str, bool]:
    """``text`` with ``[mcp_servers.<name>]`` set to ``server``; True when it replaced one."""
    if not _NAME.match(name):
        raise ConfigError(
            f"invalid MCP server name {name!r}: use letters, digits, '_' and '-' only"
        )
    try:
        McpServerConfig.model_validate(server)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"mcp_servers.{name}: {first['msg']}") from exc
    document = _parse(text, source)
    servers = document.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document["mcp_servers"] = servers
    elif not isinstance(servers, dict):
        raise ConfigError(f"{source}: mcp_servers is not a table")
    replaced = name in servers
    table = tomlkit.table()
    for key, value in server.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            value = inline
        table[key] = value
    servers[name] = table
    return _dumps(document), replaced


def _remove_entry(text: str, table: str, name: str, what: str, source: str) -> str:
    """``text`` without ``[<table>.<name>]`` (the table too once empty); ConfigError when there
    is no such entry (``what`` names it in the message)."""
    document = _parse(text, source)
    entries = document.get(table)
    if not isinstance(entries, dict) or name not in entries:
        raise ConfigError(f"no {what} named {name!r} in {source}")
    del entries[name]
    if not entries:
        del document[table]
    return _dumps(document)


def _validated(text: str, table: str, source: str) -> Config:
    """A ``Config`` of only the ``[<table>]`` of a config file's text (the first validation
    error as one ConfigError line)."""
    data = _parse(text, source).unwrap()
    try:
        return Config.model_validate({table: data.get(table, {})})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"{source}: {where}: {first['msg']}") from exc


def remove_server(text: str, name: str, *, source: str = "config.toml") -> str:
    """``text`` without ``[mcp_servers.<name>]``; ConfigError when there is none."""
    return _remove_entry(text, "mcp_servers", name, "MCP server", source)


def servers_in(text: str, *, source: str = "config.toml") -> dict[str, McpServerConfig]:
    """The validated ``[mcp_servers]`` of a config file's text."""
    return _validated(text, "mcp_servers", source).mcp_servers


def _config_path() -> Path:
    return mini_codex_home() / "config.toml"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else ""
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".config-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o777)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _fail(exc: MiniCodexError) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


def _env_pairs(values: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key:
            raise ConfigError(f"bad --env {value!r}: expected KEY=VALUE")
        env[key] = item
    return env


@mcp_app.command("add")
def add_command(
    name: Annotated[str, typer.Argument(help="Server name (letters, digits, '_', '-').")],
    command: Annotated[
        list[str] | None,
        typer.Argument(help="After --: the stdio server's command and its arguments."),
    ] = None,
    url: Annotated[
        str | None, typer.Option("--url", help="Streamable HTTP endpoint instead of a command.")
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option("--env", help="KEY=VALUE for a stdio server's environment (repeatable)."),
    ] = None,
    bearer_token_env_var: Annotated[
        str | None,
        typer.Option("--bearer-token-env-var", help="Variable holding an HTTP bearer token."),
    ] = None,
    required: Annotated[
        bool, typer.Option("--required", help="Wait for it; exec fails if it cannot start.")
    ] = False,
    startup_timeout_sec: Annotated[
        float | None, typer.Option("--startup-timeout-sec", help="Default 30.")
    ] = None,
    tool_timeout_sec: Annotated[
        float | None, typer.Option("--tool-timeout-sec", help="Default 60.")
    ] = None,
) -> None:
    """Add (or replace) an MCP server."""
    path = _config_path()
    try:
        server: dict[str, Any] = {}
        if command:
            server["command"] = command[0]
            if command[1:]:
                server["args"] = command[1:]
            if env:
                server["env"] = _env_pairs(env)
        if url is not None:
            server["url"] = url
            if bearer_token_env_var is not None:
                server["bearer_token_env_var"] = bearer_token_env_var
        elif bearer_token_env_var is not None:
            raise ConfigError("--bearer-token-env-var needs --url")
        if env and not command:
            raise ConfigError("--env needs a command (after --)")
        if required:
            server["required"] = True
        if startup_timeout_sec is not None:
            server["startup_timeout_sec"] = startup_timeout_sec
        if tool_timeout_sec is not None:
            server["tool_timeout_sec"] = tool_timeout_sec
        text, replaced = add_server(_read(path), name, server, source=str(path))
        _write(path, text)
    except MiniCodexError as exc:
        raise _fail(exc) from None
    typer.echo(f"{'Updated' if replaced else 'Added'} MCP server {name!r} in {path}")


@mcp_app.command("remove")
def remove_command(name: Annotated[str, typer.Argument(help="Server name.")]) -> None:
    """Remove an MCP server."""
    path = _config_path()
    try:
        _write(path, remove_server(_read(path), name, source=str(path)))
    except MiniCodexError as exc:
        raise _fail(exc) from None
    typer.echo(f"Removed MCP server {name!r} from {path}")


@mcp_app.command("list")
def list_command(
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON array.")] = False,
    connect: Annotated[
        bool,
        typer.Option(
            "--connect",
            help="Also connect to the enabled servers and show their prompts and state.",
        ),
    ] = False,
) -> None:
    """List the configured MCP servers, their status and how they authenticate."""
    import anyio

    from mini_codex.cli.mcp_list import list_json, list_text, live_details, with_states
    from mini_codex.mcp.auth_status import auth_statuses

    path = _config_path()
    try:
        servers = servers_in(_read(path), source=str(path))
    except MiniCodexError as exc:
        raise _fail(exc) from None
    if not servers and not json_output:
        typer.echo(f"no MCP servers in {path}")
        return
    auth = anyio.run(auth_statuses, servers, mini_codex_home(), dict(os.environ))
    states: dict[str, tuple[str, str | None]] | None = None
    prompts: dict[str, list[dict[str, Any]]] | None = None
    if connect:
        enabled = {name: server for name, server in servers.items() if server.enabled}
        home = mini_codex_home()
        states, prompts = (
            anyio.run(live_details, enabled, dict(os.environ), home) if enabled else ({}, {})
        )
    if json_output:
        listing = list_json(servers, auth)
        if states is not None:
            listing = with_states(listing, states, prompts)
        typer.echo(orjson.dumps(listing, option=orjson.OPT_INDENT_2).decode())
        return
    typer.echo(list_text(servers, auth, states, prompts), nl=False)
