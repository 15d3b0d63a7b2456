"""``mini-codex execpolicy check --rules FILE [--rules FILE…] [--pretty] -- COMMAND…``.

Prints, as one JSON line, what ``codex execpolicy check`` prints: the matched rules and the
strictest decision (``{"matchedRules": [...], "decision"?: ...}``). A bad rules file is one error
line and exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from mini_codex.errors import MiniCodexError

execpolicy_app = typer.Typer(
    name="execpolicy", help="Check commands against command rules.", no_args_is_help=True
)


@execpolicy_app.command(
    "check", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True}
)
def check_command(
    command: Annotated[list[str], typer.Argument(help="The command to check (after --).")],
    rules: Annotated[list[Path], typer.Option("--rules", "-r", help="A .rules file (repeatable).")],
    pretty: Annotated[bool, typer.Option("--pretty", help="Indent the JSON.")] = False,
) -> None:
    """Print the decision of the rules for COMMAND as JSON."""
    from mini_codex.runtime.rule_files import read_rule_files

    try:
        ruleset = read_rule_files(list(rules))
    except MiniCodexError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    result = ruleset.check(command)
    typer.echo(
        json.dumps(result, indent=2 if pretty else None, separators=None if pretty else (",", ":"))
    )
