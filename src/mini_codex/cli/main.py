"""``mini-codex`` entry point: the typer application and its sub-command groups.

With no subcommand, ``mini-codex [PROMPT]`` starts the interactive UI (``cli/interactive.py``):
the group callback takes the UI's options, and a first positional word that is not a command name
is the UI's opening prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from mini_codex._version import __version__

_VALUE_OPTIONS = frozenset(
    {"-m", "--model", "-C", "--cd", "-s", "--sandbox", "-a", "--ask-for-approval", "-c", "--config"}
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
) -> None:
    """A Python coding-agent runtime built on the contracts of OpenAI Codex."""
    if ctx.invoked_subcommand is not None:
        return
    from mini_codex.cli.interactive import UiOptions, run_interactive
    from mini_codex.cli.run import _exit

    options = UiOptions(model, cd, sandbox, ask_for_approval, config or [])
    prompt: Any = ctx.meta.get(PROMPT_KEY)
    _exit(lambda: run_interactive(options, prompt=prompt))


def _register() -> None:
    from mini_codex.cli.run import exec_command, resume_command

    app.command("exec", help="Run one task non-interactively, streaming what the agent does.")(
        exec_command
    )
    app.command(
        "resume",
        help="Continue a recorded session: with a prompt non-interactively, without one in the "
        "interactive UI (no session given: pick one).",
    )(resume_command)

    from mini_codex.cli.rollout_cmd import rollout_app
    from mini_codex.cli.sessions_cmd import sessions_app

    app.add_typer(rollout_app, name="rollout")
    app.add_typer(sessions_app, name="sessions")

    from mini_codex.cli.mcp_cmd import mcp_app

    app.add_typer(mcp_app, name="mcp")

    from mini_codex.cli.execpolicy_cmd import execpolicy_app

    app.add_typer(execpolicy_app, name="execpolicy")


_register()
