"""``mini-codex`` entry point: the typer application and its sub-command groups."""

from __future__ import annotations

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


def _register() -> None:
    from mini_codex.cli.run import exec_command, resume_command

    app.command("exec", help="Run one task non-interactively, streaming what the agent does.")(
        exec_command
    )
    app.command("resume", help="Continue a recorded session with a new task.")(resume_command)

    from mini_codex.cli.compact_cmd import compact_command

    app.command("compact", help="Summarize a recorded session's history now (manual compaction).")(
        compact_command
    )

    from mini_codex.cli.rollout_cmd import rollout_app
    from mini_codex.cli.sessions_cmd import sessions_app

    app.add_typer(rollout_app, name="rollout")
    app.add_typer(sessions_app, name="sessions")

    from mini_codex.cli.batch_cmd import batch_command

    app.command(
        "batch", help="Run many tasks (TASKS.jsonl), locally or on a Ray cluster; resumable."
    )(batch_command)

    from mini_codex.cli.mcp_cmd import mcp_app

    app.add_typer(mcp_app, name="mcp")

    from mini_codex.cli.execpolicy_cmd import execpolicy_app

    app.add_typer(execpolicy_app, name="execpolicy")


_register()
