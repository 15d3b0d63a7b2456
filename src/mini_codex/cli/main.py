"""``mini-codex`` entry point: the typer application and its sub-command groups.

With no subcommand, ``mini-codex [PROMPT]`` starts the interactive UI (``cli/interactive.py``):
the group callback takes the UI's options, and a first positional word that is not a command name
is the UI's opening prompt.

``exec`` has Codex's sub-command ``resume``: ``mini-codex exec [OPTIONS] resume [OPTIONS]
[SESSION_ID | --last] [PROMPT]`` runs the ``exec resume`` command with the options given on both
sides of the word (the official TypeScript SDK puts ``--cd``, ``--sandbox`` and ``--config`` before
it and ``--image`` after it). A usage error of a sub-command (an unknown option, a missing value)
is one ``error:`` line on stderr and exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.core import Command  # typer vendors click and exports neither of these
from typer._click.exceptions import UsageError
from typer.core import TyperGroup, TyperOption
from typer.main import get_command

from mini_codex._version import __version__
from mini_codex.cli.signals import settle_heap
from mini_codex.cli.ui_argv import COMMANDS as _COMMANDS
from mini_codex.cli.ui_argv import VALUE_OPTIONS as _VALUE_OPTIONS

PROMPT_KEY = "mini_codex_prompt"
_COMMAND_KEY = "mini_codex_command"


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

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        if args and args[0] == "exec" and _EXEC_SUBCOMMANDS:
            rest = args[1:]
            index = _first_positional(self.commands.get("exec"), rest)
            if index is not None and rest[index] in _EXEC_SUBCOMMANDS:
                name = rest[index]
                ctx.meta[_COMMAND_KEY] = f"exec {name}"  # settles in run_session, as exec
                return f"exec {name}", _EXEC_SUBCOMMANDS[name], rest[:index] + rest[index + 1 :]
        resolved = super().resolve_command(ctx, args)
        ctx.meta[_COMMAND_KEY] = resolved[0]
        if resolved[0] not in _SETTLED_BY_COMMAND:
            settle_heap()  # the collector is back on before any other command runs
        return resolved

    def invoke(self, ctx: Any) -> Any:
        # The group's own usage errors happen before this (typer renders them); the ones
        # raised in here are a sub-command's.
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            named = ctx.meta.get(_COMMAND_KEY)
            where = (
                exc.ctx.command_path
                if exc.ctx is not None and exc.ctx.parent is not None
                else f"{ctx.command_path} {named}"
                if named
                else ctx.command_path
            )
            typer.echo(f"error: {where}: {exc.format_message()} (see {where} --help)", err=True)
            raise typer.Exit(exc.exit_code) from None


_SETTLED_BY_COMMAND = frozenset({"exec", "resume"})
"""Commands that call ``settle_heap`` themselves once their imports are done (``run_session``):
the collector stays off until then (``signals.pause_collection``)."""

_EXEC_SUBCOMMANDS: dict[str, Command] = {}
"""``exec``'s sub-commands (``resume``), registered with ``exec``."""


def _first_positional(command: Command | None, args: list[str]) -> int | None:
    """Index of the first positional word of ``args`` for ``command`` (skipping its options and
    their values), or None."""
    takes_value = {
        name
        for param in (command.params if command is not None else ())
        if isinstance(param, TyperOption) and not param.is_flag and not param.count
        for name in param.opts
    }
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            return None
        if word in takes_value:
            index += 2
            continue
        if word.startswith("-") and word != "-":
            index += 1
            continue
        return index
    return None


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
    from mini_codex.cli.interactive import UiOptions, launch  # not cli.run: exec's imports

    options = UiOptions(model, cd, sandbox, ask_for_approval, config or [], tuple(image or ()))
    prompt: Any = ctx.meta.get(PROMPT_KEY)
    launch(options, prompt)


def _first_word(argv: Sequence[str]) -> str | None:
    """The first positional word of the group's arguments (after its options and their
    values), or None."""
    index = 1
    while index < len(argv):
        word = argv[index]
        if word == "--":
            return None
        if word in _VALUE_OPTIONS:
            index += 2
            continue
        if not word.startswith("-"):
            return word
        index += 1
    return None


def _register(argv: Sequence[str], *, launched: bool) -> None:
    """Register the sub-commands; when argv names one, only that one (start-up: the other
    groups import the runtime, rich, tomlkit and the rollout inspector, time the command never
    needs). When the console entry point runs the process (``launched``) and argv names none
    (the interactive UI, with or without a prompt), none; ``--help`` lists them all. Imported
    in-process (tests, embedders invoking ``app``), every command is registered."""
    named = _first_word(argv)
    if named in _COMMANDS:
        only: str | None = named
    elif launched and "--help" not in argv[1:]:
        only = ""
    else:
        only = None

    if only in (None, "exec", "resume"):
        from mini_codex.cli.resume_cmd import resume_command
        from mini_codex.cli.run import exec_command

        if only in (None, "exec"):
            from mini_codex.cli.resume_cmd import exec_resume_command

            app.command(
                "exec",
                help="Run one task non-interactively, streaming what the agent does. "
                "`mini-codex exec [OPTIONS] resume [SESSION_ID | --last] [PROMPT]` continues a "
                "recorded session the same way (Codex's `exec resume`).",
            )(exec_command)
            resume_app = typer.Typer(add_completion=False)
            resume_app.command(
                "resume",
                help="Continue a recorded session non-interactively (the prompt from the "
                "argument, else stdin).",
            )(exec_resume_command)
            _EXEC_SUBCOMMANDS["resume"] = get_command(resume_app)
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
        from mini_codex.cli import mcp_login_cmd  # noqa: F401  (adds mcp login/logout/status)
        from mini_codex.cli.mcp_cmd import mcp_app

        app.add_typer(mcp_app, name="mcp")
    if only in (None, "plugin"):
        from mini_codex.cli.plugin_cmd import plugin_app

        app.add_typer(plugin_app, name="plugin")
    if only in (None, "execpolicy"):
        from mini_codex.cli.execpolicy_cmd import execpolicy_app

        app.add_typer(execpolicy_app, name="execpolicy")
    if only in (None, "exec-server"):
        from mini_codex.cli.exec_server_cmd import exec_server_command

        app.command("exec-server", help="Run an executor speaking Codex's exec-server protocol.")(
            exec_server_command
        )
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


_register(sys.argv, launched=getattr(sys.modules.get("mini_codex.cli.entry"), "launching", False))
