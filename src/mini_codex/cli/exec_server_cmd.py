"""``mini-codex exec-server --listen ws://IP:PORT | stdio``: run an executor for other machines.

Speaks Codex's exec-server protocol (``mini_codex.exec_server``). Commands run with this process's
environment and the sandbox policy each request carries. A websocket listener on a non-loopback
address needs ``--ws-auth capability-token --ws-token-file FILE``. With ``ws://IP:0`` a free port
is chosen; the first line on stderr is always ``listening on ws://IP:PORT``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

__all__ = ["exec_server_command"]


def exec_server_command(
    listen: Annotated[
        str, typer.Option("--listen", help="ws://IP:PORT (default) or stdio.")
    ] = "ws://127.0.0.1:0",
    ws_auth: Annotated[
        str | None, typer.Option("--ws-auth", help="capability-token: require a bearer token.")
    ] = None,
    ws_token_file: Annotated[
        Path | None, typer.Option("--ws-token-file", help="Absolute path of the token file.")
    ] = None,
) -> None:
    """Run an executor speaking Codex's exec-server protocol."""
    import anyio

    from mini_codex.cli.env import host_environment
    from mini_codex.exec_server import ListenConfig, serve_stdio, serve_websocket
    from mini_codex.exec_server.listen import ListenError, parse_listen

    token: str | None = None
    if ws_auth is not None:
        if ws_auth != "capability-token":
            _fail(f"--ws-auth must be capability-token, got {ws_auth!r}")
        if ws_token_file is None or not ws_token_file.is_absolute():
            _fail("--ws-auth capability-token needs --ws-token-file with an absolute path")
        try:
            token = ws_token_file.read_text().strip()
        except OSError as exc:
            _fail(f"cannot read --ws-token-file {ws_token_file}: {exc.strerror}")
        if not token:
            _fail(f"--ws-token-file {ws_token_file} is empty")
    elif ws_token_file is not None:
        _fail("--ws-token-file needs --ws-auth capability-token")
    try:
        address = parse_listen(listen, token=token)
    except ListenError as exc:
        _fail(str(exc))
    config = ListenConfig(
        own_env=dict(os.environ),
        cwd=os.getcwd(),
        shell=host_environment().shell,
        token=token,
    )
    try:
        if address is None:
            anyio.run(serve_stdio, config)
        else:
            host, port = address

            def ready(bound: int) -> None:
                print(f"listening on ws://{host}:{bound}", file=sys.stderr, flush=True)

            anyio.run(lambda: serve_websocket(host, port, config, ready=ready))
    except OSError as exc:
        _fail(f"cannot listen on {listen}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
