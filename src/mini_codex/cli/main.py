"""``mini-codex`` entry point: the typer application and its sub-command groups.

With no subcommand, ``mini-codex [PROMPT]`` starts the interactive UI (``cli/interactive.py``):
the group callback takes the UI's options, and a first positional word that is not a command name
is the UI's opening prompt.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from mini_codex._version import __version__

_VALUE_OPTIONS = frozenset(
    {
        *("-m", "--model", "-C", "--cd", "-s", "--sandbox", "-a", "--ask-for-approval"),
        *("-c", "--config", "-i", "--image"),
    }
)
PROMPT_KEY = "mini_codex_prompt"


class _PromptOrCommand(TyperGroup):
    """A group whose first positional word is a command, or else the UI's prompt."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        rest = list(args)
        index = 0
        while index < len(rest):
            word = rest[index]
            if word == "--":
                break
            if word in _VALUE_OPTIONS:
                index += 2
                continue
            if word.startswith("-"):
                index += 1
                continue
            if word not in self.commands:
                ctx.meta[PROMPT_KEY] = " ".join(rest[index:])
                del rest[index:]
            break
        return super().parse_args(ctx, rest)


app = typer.Typer(
    name="mini-codex",
    help="A Python coding-agent runtime built on the contracts of OpenAI Codex. "
    "Without a command, `mini-codex [PROMPT]` starts the interactive terminal UI.",
    cls=_PromptOrCommand,
    invoke_without_command=True,
    no_args_is_help=False,
    add_completion=False,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"mini-codex {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model (UI), or scripted:PATH.")
    ] = None,
    cd: Annotated[Path | None, typer.Option("--cd", "-C", help="Working directory (UI).")] = None,
    sandbox: Annotated[
        str | None,
        typer.Option("--sandbox", "-s", help="read-only | workspace-write | danger-full-access"),
    ] = None,
    ask_for_approval: Annotated[
        str | None,
        typer.Option(
            "--ask-for-approval", "-a", help="untrusted | on-failure | on-request | never"
        ),
    ] = None,
    config: Annotated[
        list[str] | None, typer.Option("--config", "-c", help="Override a config key (UI).")
    ] = None,
    image: Annotated[
        list[Path] | None,
        typer.Option("--image", "-i", help="Attach an image FILE to the first prompt (UI)."),
    ] = None,
) -> None:
    """A Python coding-agent runtime built on the contracts of OpenAI Codex."""
    if ctx.invoked_subcommand is not None:
        return
    from mini_codex.cli.interactive import UiOptions, run_interactive
    from mini_codex.cli.run import exit_with

    options = UiOptions(model, cd, sandbox, ask_for_approval, config or [], tuple(image or ()))
    prompt: Any = ctx.meta.get(PROMPT_KEY)
    exit_with(lambda: run_interactive(options, prompt=prompt))


def _register(argv: Sequence[str]) -> None:
    """Register the sub-commands; when argv names one, only that one (start-up: the other
    groups import rich, tomlkit and the rollout inspector, ~0.2 s the command never needs)."""
    named = next((arg for arg in argv[1:] if not arg.startswith("-")), None)
    only = named if named in _COMMANDS else None

    if only in (None, "exec", "resume"):
        from mini_codex.cli.resume_cmd import resume_command
        from mini_codex.cli.run import exec_command

        if only in (None, "exec"):
            app.command(
                "exec", help="Run one task non-interactively, streaming what the agent does."
            )(exec_command)
        if only in (None, "resume"):
            app.command(
                "resume",
                help="Continue a recorded session: with a prompt non-interactively, without one "
                "in the interactive UI (no session given: pick one).",
            )(resume_command)
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

    if only in (None, "app-server"):
        from mini_codex.cli.app_server_cmd import app_server_command

        app.command(
            "app-server", help="Serve Codex's app-server JSON-RPC protocol (stdio or ws://)."
        )(app_server_command)


_COMMANDS = (
    "exec",
    "resume",
    "compact",
    "rollout",
    "sessions",
    "batch",
    "mcp",
    "execpolicy",
    "ui",
    "app-server",
)
_register(sys.argv)
