"""``mini-codex mcp login | logout | status``: OAuth logins and live state of the MCP servers.

* ``mcp login NAME [--no-browser] [--timeout-sec S]``: the OAuth authorization-code flow with
  PKCE against a streamable-HTTP server's metadata (``mcp/oauth.py``): the authorization URL is
  printed (and opened in the browser unless ``--no-browser``), the redirect comes back to a
  loopback listener on 127.0.0.1, the tokens are stored in ``$MINI_CODEX_HOME/mcp_oauth/``
  (mode 0600). Sessions then use and refresh them.
* ``mcp logout NAME``: removes the stored tokens.
* ``mcp status [--json]``: connects to every enabled server at once (each within its
  ``startup_timeout_sec``) and shows its state (ready, failed with the error, needs login), its
  tools, whether it has resources, and its prompts (``/mcp__SERVER__PROMPT`` in the UI).

Registered on ``mcp_app`` (``cli/mcp_cmd.py``) by ``cli/main.py``.
"""

from __future__ import annotations

import os
import sys
import webbrowser
from typing import Annotated

import anyio
import orjson
import typer

from mini_codex.cli.env import mini_codex_home
from mini_codex.cli.mcp_cmd import _config_path, _fail, _read, mcp_app, servers_in
from mini_codex.cli.mcp_list import server_rows
from mini_codex.config import McpServerConfig
from mini_codex.errors import ConfigError, MiniCodexError

__all__ = ["login_command", "logout_command", "status_command"]


def _http_server(name: str) -> McpServerConfig:
    path = _config_path()
    servers = servers_in(_read(path), source=str(path))
    server = servers.get(name)
    if server is None:
        raise ConfigError(f"no MCP server {name!r} in {path}")
    if server.url is None:
        raise ConfigError(f"MCP server {name!r} is a stdio server: OAuth is for `url` servers")
    return server


@mcp_app.command("login")
def login_command(
    name: Annotated[str, typer.Argument(help="Server name (a `url` server).")],
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Only print the URL to open.")
    ] = False,
    timeout_sec: Annotated[
        float, typer.Option("--timeout-sec", help="Give up after this long.")
    ] = 300.0,
) -> None:
    """Log in to an MCP server with OAuth (authorization code + PKCE)."""
    from mini_codex.mcp.oauth import login
    from mini_codex.mcp.oauth_store import OAuthStore

    try:
        server = _http_server(name)
    except MiniCodexError as exc:
        raise _fail(exc) from None
    assert server.url is not None
    store = OAuthStore(mini_codex_home(), name, server.url)

    def show(url: str) -> None:
        typer.echo(f"Open this URL to log in to MCP server {name!r}:\n{url}")
        sys.stdout.flush()
        if not no_browser:
            webbrowser.open(url)

    try:
        anyio.run(lambda: login(name, store, show_url=show, timeout_s=timeout_sec))
    except MiniCodexError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"Logged in to MCP server {name!r} (tokens in {store.path})")


@mcp_app.command("logout")
def logout_command(name: Annotated[str, typer.Argument(help="Server name.")]) -> None:
    """Remove the stored OAuth login of an MCP server."""
    from mini_codex.mcp.oauth_store import OAuthStore

    try:
        server = _http_server(name)
    except MiniCodexError as exc:
        raise _fail(exc) from None
    assert server.url is not None
    if not OAuthStore(mini_codex_home(), name, server.url).delete():
        typer.echo(f"error: no login stored for MCP server {name!r}", err=True)
        raise typer.Exit(1)
    typer.echo(f"Logged out of MCP server {name!r}")


@mcp_app.command("status")
def status_command(
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON array.")] = False,
) -> None:
    """Connect to the enabled MCP servers and show their state, tools and prompts."""
    path = _config_path()
    try:
        servers = {
            name: server
            for name, server in servers_in(_read(path), source=str(path)).items()
            if server.enabled
        }
    except MiniCodexError as exc:
        raise _fail(exc) from None
    rows = anyio.run(server_rows, servers, dict(os.environ), mini_codex_home()) if servers else []
    if json_output:
        typer.echo(orjson.dumps(rows).decode())
        return
    if not rows:
        typer.echo(f"no enabled MCP servers in {path}")
        return
    for row in rows:
        typer.echo(
            f"{row['name']}: {row['status']}" + (f" - {row['error']}" if row["error"] else "")
        )
        if row["tools"]:
            typer.echo(f"  tools: {', '.join(row['tools'])}")
        if row["resources"]:
            typer.echo("  resources: yes")
        for prompt in row["prompts"]:
            arguments = "".join(f" {arg}=…" for arg in prompt["arguments"])
            typer.echo(f"  prompt: /mcp__{row['name']}__{prompt['name']}{arguments}")
