"""``mini-codex sessions list``: the recorded sessions of a home, newest first, from the index.

The listing comes from :class:`~mini_codex.rollout.index.SessionIndex`, refreshed first (only
changed files are re-read). ``--home`` lists another home laid out the same way, e.g. the Codex
CLI's ``~/.codex``; its index database is then kept under our own home
(``$MINI_CODEX_HOME/indexes/<hash>.sqlite``), never written into the other home.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mini_codex.cli.env import mini_codex_home
from mini_codex.cli.remote import HomeNotFound, read_home
from mini_codex.errors import MiniCodexError
from mini_codex.rollout.index import SessionIndex, SessionInfo

__all__ = ["render_sessions", "session_json", "sessions_app"]

sessions_app = typer.Typer(
    name="sessions",
    help="List recorded sessions (mini-codex's, or a Codex CLI home with --home).",
    no_args_is_help=True,
    add_completion=False,
)

MESSAGE_CHARS = 200


def index_path_for(home: Path, own_home: Path) -> Path | None:
    """Where the index of ``home`` lives: None (inside it) for our home, else under ours."""
    if _same_dir(home, own_home):
        return None
    digest = hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:16]
    return own_home / "indexes" / f"{digest}.sqlite"


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def session_json(info: SessionInfo) -> dict[str, Any]:
    """One session of ``sessions list --json``."""
    return {
        "id": info.id,
        "path": str(info.path),
        "cwd": info.cwd,
        "created": info.created,
        "updated": info.updated,
        "turns": info.turn_count,
        "first_user_message": info.first_user_message,
        "error": info.error,
        "parent_thread_id": info.parent_thread_id,
        "agent_nickname": info.agent_nickname,
    }


def tree_order(sessions: list[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """Sessions with their depth, each sub-agent right under its parent (when listed too)."""
    listed = {info.id for info in sessions}
    children: dict[str, list[SessionInfo]] = {}
    for info in sessions:
        if info.parent_thread_id in listed and info.parent_thread_id != info.id:
            children.setdefault(info.parent_thread_id or "", []).append(info)
    ordered: list[tuple[SessionInfo, int]] = []

    def add(info: SessionInfo, depth: int) -> None:
        ordered.append((info, depth))
        for child in sorted(children.pop(info.id, []), key=lambda c: c.created or ""):
            add(child, depth + 1)

    for info in sessions:
        if info.parent_thread_id not in listed or info.parent_thread_id == info.id:
            add(info, 0)
    return ordered


def _label(info: SessionInfo, depth: int) -> str:
    if depth == 0:
        return info.id
    nickname = f" ({info.agent_nickname})" if info.agent_nickname else ""
    return f"{'  ' * (depth - 1)}└ {info.id}{nickname}"


def _when(timestamp: str | None) -> str:
    if not timestamp:
        return "-"
    return timestamp.replace("T", " ")[:16]


def _first_line(text: str | None) -> str:
    if not text:
        return ""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:MESSAGE_CHARS]
    return ""


def render_sessions(sessions: list[SessionInfo]) -> Table:
    """The table of ``sessions list``."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("id", no_wrap=True)
    table.add_column("updated (UTC)", no_wrap=True)
    table.add_column("cwd", overflow="ellipsis", no_wrap=True, max_width=40)
    table.add_column("turns", justify="right", no_wrap=True)
    table.add_column("first user message", overflow="ellipsis", no_wrap=True, ratio=1)
    for info, depth in tree_order(sessions):
        message = (
            Text(f"error: {info.error}", style="red")
            if info.error
            else Text(_first_line(info.first_user_message))
        )
        # Text cells, not strings: paths and messages may contain rich markup characters.
        table.add_row(
            Text(_label(info, depth)),
            Text(_when(info.updated)),
            Text(info.cwd or "-"),
            Text(str(info.turn_count)),
            message,
        )
    return table


@sessions_app.command("list")
def list_command(
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON array of sessions.")
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Show at most N sessions.")
    ] = None,
    home: Annotated[
        str | None,
        typer.Option(
            "--home",
            help="Home to list (default $MINI_CODEX_HOME or ~/.mini-codex); e.g. ~/.codex, or a "
            "batch's --out DEST (a directory or s3://bucket/prefix).",
        ),
    ] = None,
) -> None:
    """List sessions, most recently updated first."""
    own_home = mini_codex_home()
    target = own_home
    try:
        target, subdir, urls = read_home(home, own_home)
        db_path = index_path_for(target, own_home)
        with SessionIndex(target, db_path=db_path, subdir=subdir) as index:
            index.refresh()
            sessions = index.list(limit)
        for notice in index.notices:
            typer.echo(f"notice: {notice}", err=True)
    except HomeNotFound as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    except (MiniCodexError, OSError, sqlite3.Error) as error:
        typer.echo(f"error: cannot index sessions under {home or target}: {error}", err=True)
        raise typer.Exit(1) from None
    if json_output:
        listed = [session_json(info) for info in sessions]
        for entry in listed:
            entry["path"] = urls.get(entry["path"], entry["path"])
        typer.echo(orjson.dumps(listed).decode())
        return
    if not sessions:
        typer.echo(f"no sessions under {home or target / subdir}")
        return
    Console(highlight=False).print(render_sessions(sessions))
