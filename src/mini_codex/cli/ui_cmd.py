"""``mini-codex ui``: serve the session inspector (``mini_codex.web``) on a local port.

The first line printed is the URL (``http://HOST:PORT/``, with ``?token=…`` when the host is not a
loopback name), so ``--port 0`` can be scripted. Loopback names (127.0.0.1, ::1, localhost) are
served without a token; any other bind address needs the random token printed in that URL.
"""

from __future__ import annotations

import sys
import webbrowser
from typing import Annotated

import typer

from mini_codex.cli.env import mini_codex_home
from mini_codex.cli.remote import HomeNotFound, read_home
from mini_codex.cli.sessions_cmd import index_path_for
from mini_codex.errors import MiniCodexError

__all__ = ["ui_command"]


def ui_command(
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free port).")] = 0,
    home: Annotated[
        str | None,
        typer.Option(
            "--home",
            help="Home to inspect (default $MINI_CODEX_HOME); e.g. ~/.codex, or a batch's --out "
            "DEST (a directory or s3://bucket/prefix, mirrored once at start).",
        ),
    ] = None,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
    whole_file_bytes: Annotated[
        int | None,
        typer.Option(
            "--whole-file-bytes",
            hidden=True,
            help="Read files up to this size whole, larger ones in checkpoint windows.",
        ),
    ] = None,
) -> None:
    """Inspect sessions in the browser: what the model saw at every step."""
    import socket

    import uvicorn

    from mini_codex.web.app import create_app
    from mini_codex.web.auth import needs_token, new_token
    from mini_codex.web.inspector import Inspector

    own_home = mini_codex_home()
    try:
        target, subdir, urls = read_home(home, own_home)
    except HomeNotFound as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    except (MiniCodexError, OSError) as error:
        typer.echo(f"error: cannot read sessions under {home}: {error}", err=True)
        raise typer.Exit(1) from None
    token = new_token() if needs_token(host) else None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        typer.echo(f"error: cannot bind {host}:{port}: {error.strerror or error}", err=True)
        raise typer.Exit(1) from None
    sock.listen(128)
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound_port}/" + (f"?token={token}" if token else "")
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    from mini_codex.web.source import WHOLE_FILE_BYTES

    limit = WHOLE_FILE_BYTES if whole_file_bytes is None else whole_file_bytes
    inspector = Inspector(
        target, index_path_for(target, own_home), whole_limit=limit, subdir=subdir, urls=urls
    )
    app = create_app(inspector, token)
    if open_browser:
        webbrowser.open(url)
    # Open event streams never end by themselves: do not wait long for them on Ctrl-C.
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
