"""``mini-codex app-server``: serve Codex's app-server protocol on stdio or a websocket.

This module reads the process (``MINI_CODEX_HOME``, ``CODEX_HOME``, the config file, ``-c``
overrides, the shell, the timezone, API keys) into a ``host.HostEnvironment`` inside a
``HostValues``; ``mini_codex.app_server``
does the rest. Logs go to stderr; stdout carries only protocol messages. ``--listen
ws://HOST:PORT`` prints ``listening on ws://HOST:PORT`` on stderr once bound (port 0 picks one);
a host other than 127.0.0.1/::1/localhost needs the token printed there (``Authorization:
Bearer TOKEN``).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer

from mini_codex.errors import MiniCodexError

__all__ = ["app_server_command"]


def _host_values(overrides: list[str]) -> Any:
    from mini_codex import __version__
    from mini_codex.app_server import HostValues
    from mini_codex.host import HostEnvironment, load_host_config

    env = HostEnvironment.from_variables(os.environ, Path.cwd(), Path.home())
    codex_home = os.environ.get("CODEX_HOME")
    if codex_home:
        env = replace(env, codex_home=Path(codex_home).expanduser())
    # Refuse a broken config now; unknown keys are reported once.
    load_host_config(env.home, overrides, warn=lambda line: typer.echo(line, err=True))
    return HostValues(env=env, overrides=tuple(overrides), user_agent=f"mini-codex/{__version__}")


def app_server_command(
    listen: Annotated[
        str,
        typer.Option(
            "--listen", help="stdio:// (default) or ws://HOST:PORT (loopback by default)."
        ),
    ] = "stdio://",
    config: Annotated[
        list[str] | None, typer.Option("--config", "-c", help="Override a config key: key=value.")
    ] = None,
) -> None:
    """Serve Codex's app-server JSON-RPC protocol (threads and turns) for editors and apps."""
    from mini_codex.app_server.transport import parse_listen

    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(message)s"
    )
    try:
        target = parse_listen(listen)
        host = _host_values(config or [])
    except (ValueError, MiniCodexError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    received: list[int] = []
    if target is None:
        anyio.run(_until_signal, received, _serve_stdio, host)
    else:
        anyio.run(_until_signal, received, _serve_ws, host, *target)
    if received:
        raise typer.Exit(128 + received[0])


async def _until_signal(received: list[int], serve: Any, *args: Any) -> None:
    """Run ``serve`` until it returns or SIGINT/SIGTERM arrives; a signal cancels it, which
    closes every thread as stdin EOF does (turns interrupted, rollouts closed)."""
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    received.append(int(signum))
                    group.cancel_scope.cancel()
                    return

        group.start_soon(watch)
        await serve(*args)
        group.cancel_scope.cancel()


async def _serve_stdio(host: Any) -> None:
    from mini_codex.app_server import serve_connection
    from mini_codex.app_server.transport import stdio_lines, stdout_writer

    try:
        await serve_connection(host, stdio_lines(), stdout_writer())
    finally:
        with anyio.CancelScope(shield=True):
            await host.clients.aclose()


async def _serve_ws(host: Any, address: str, port: int) -> None:
    from mini_codex.app_server import serve_connection
    from mini_codex.app_server.transport import needs_token, serve_websocket
    from mini_codex.web.auth import new_token

    token = new_token() if needs_token(address) else None

    def listening(bound: int) -> None:
        shown = f"[{address}]" if ":" in address else address
        suffix = f" (token: {token})" if token else ""
        sys.stderr.write(f"listening on ws://{shown}:{bound}{suffix}\n")
        sys.stderr.flush()

    async def handler(lines: Any, write: Any) -> None:
        await serve_connection(host, lines, write)

    try:
        await serve_websocket(address, port, handler, token=token, on_listening=listening)
    finally:
        with anyio.CancelScope(shield=True):
            await host.clients.aclose()
