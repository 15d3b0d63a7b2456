"""``mini-codex`` entry point: the typer application and its sub-command groups."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from mini_codex._version import __version__

app = typer.Typer(
    name="mini-codex",
    help="A Python coding-agent runtime built on the contracts of OpenAI Codex.",
    no_args_is_help=True,
    add_completion=False,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"mini-codex {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """A Python coding-agent runtime built on the contracts of OpenAI Codex."""


def _register(argv: Sequence[str]) -> None:
    """Register the sub-commands; when argv names one, only that one (start-up: the other
    groups import rich, tomlkit and the rollout inspector, ~0.2 s the command never needs)."""
    named = next((arg for arg in argv[1:] if not arg.startswith("-")), None)
    only = named if named in _COMMANDS else None

    if only in (None, "exec", "resume"):
        from mini_codex.cli.run import exec_command, resume_command

        if only in (None, "exec"):
            app.command(
                "exec", help="Run one task non-interactively, streaming what the agent does."
            )(exec_command)
        if only in (None, "resume"):
            app.command("resume", help="Continue a recorded session with a new task.")(
                resume_command
            )
    if only in (None, "compact"):
        from mini_codex.cli.compact_cmd import compact_command

        app.command(
            "compact", help="Summarize a recorded session's history now (manual compaction)."
        )(compact_command)

    if only in (None, "rollout"):
        from mini_codex.cli.rollout_cmd import rollout_app

        app.add_typer(rollout_app, name="rollout")
    if only in (None, "sessions"):
        from mini_codex.cli.sessions_cmd import sessions_app

        app.add_typer(sessions_app, name="sessions")
    if only in (None, "batch"):
        from mini_codex.cli.batch_cmd import batch_command

        app.command(
            "batch", help="Run many tasks (TASKS.jsonl), locally or on a Ray cluster; resumable."
        )(batch_command)
    if only in (None, "mcp"):
        from mini_codex.cli.mcp_cmd import mcp_app

        app.add_typer(mcp_app, name="mcp")
    if only in (None, "execpolicy"):
        from mini_codex.cli.execpolicy_cmd import execpolicy_app

        app.add_typer(execpolicy_app, name="execpolicy")
    if only in (None, "ui"):
        from mini_codex.cli.ui_cmd import ui_command

        app.command("ui", help="Inspect sessions in the browser: what the model saw at each step.")(
            ui_command
        )


_COMMANDS = ("exec", "resume", "compact", "rollout", "sessions", "batch", "mcp", "execpolicy", "ui")
_register(sys.argv)
