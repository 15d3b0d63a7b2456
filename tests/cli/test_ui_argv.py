"""``ui_argv``: the plain UI command line, read without typer, means what typer reads in it; any
other command line is left to typer. The UI's home is the host's, and the ``--sandbox`` and
``--ask-for-approval`` spellings it lets through unchecked are ones the host accepts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mini_codex.cli import interactive, main
from mini_codex.cli.interactive import UiOptions, ui_home
from mini_codex.cli.ui_argv import COMMANDS, VALUE_OPTIONS, plain_ui_line
from mini_codex.host import HostEnvironment

ENTRY = "from mini_codex.cli.entry import main; main()"


def test_it_knows_the_commands_and_value_options_of_the_typer_group() -> None:
    registered = {command.name for command in main.app.registered_commands}
    registered |= {group.name for group in main.app.registered_groups}
    assert registered == COMMANDS  # every command typer has (imported in-process: all of them)
    group_options = {
        name
        for param in typer.main.get_command(main.app).params
        if not getattr(param, "is_flag", False)
        for name in param.opts
    }
    assert group_options == VALUE_OPTIONS


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["hello", "world"],
        ["-m", "gpt-x", "do", "it"],
        ["-c", "model=y", "--cd", "/tmp", "-a", "never", "task"],
        ["-i", "a.png", "--image", "b.jpg", "what", "is", "this"],
        ["--model", "a", "--model", "b", "-s", "read-only", "--ask-for-approval", "on-request"],
        ["-C", "work", "-c", "a=1", "--config", "b=2", "fix", "-m", "x", "--", "now"],
        ["-m", "exec"],
        [""],
    ],
)
def test_a_plain_line_reads_as_typer_reads_it(
    monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    started: list[tuple[UiOptions, str | None]] = []

    def fake_ui(options: UiOptions, *, prompt: str | None = None) -> int:
        started.append((options, prompt))
        return 0

    monkeypatch.setattr(interactive, "run_interactive", fake_ui)
    result = CliRunner().invoke(main.app, args)
    assert result.exit_code == 0, result.output
    line = plain_ui_line(["mini-codex", *args])
    assert line is not None
    fields, prompt = line
    assert [(UiOptions(**fields), prompt)] == started  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args",
    [
        ["exec", "hi"],
        ["resume"],
        ["--help"],
        ["--version"],
        ["--model=x", "hi"],
        ["-mx", "hi"],
        ["-m"],
        ["-m", "--cd", "x"],
        ["--", "hi"],
        ["--sandbox", "read-only", "sessions", "list"],
        ["--unknown"],
    ],
)
def test_anything_else_is_left_to_typer(args: list[str]) -> None:
    assert plain_ui_line(["mini-codex", *args]) is None


def test_the_plain_line_keeps_the_cli_errors(tmp_path: Path) -> None:
    env = {**os.environ, "MINI_CODEX_HOME": str(tmp_path)}

    def run(*args: str) -> tuple[int, str, str]:
        done = subprocess.run(
            [sys.executable, "-c", ENTRY, *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.returncode, done.stdout, done.stderr

    assert run("-m", "scripted:x.jsonl", "fix the bug") == (
        2,
        "",
        "error: the interactive UI needs a terminal; use `mini-codex exec PROMPT` in scripts\n",
    )
    code, out, err = run("--sandbox", "sideways")
    assert (code, out) == (2, "")
    assert err.startswith("error: unknown --sandbox 'sideways'")


@pytest.mark.parametrize("value", [None, "~/elsewhere", "/tmp/mini-home"])
def test_the_ui_home_is_the_hosts(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("MINI_CODEX_HOME", raising=False)
    else:
        monkeypatch.setenv("MINI_CODEX_HOME", value)
    host = HostEnvironment.from_variables(os.environ, Path.cwd(), Path.home())
    assert ui_home() == host.home


@pytest.mark.parametrize("sandbox", interactive.SANDBOXES)
@pytest.mark.parametrize("approval", interactive.APPROVALS)
def test_the_spellings_the_ui_lets_through_unchecked_are_the_hosts(
    sandbox: str | None, approval: str | None
) -> None:
    from mini_codex.config import Config
    from mini_codex.host import approval_choice, sandbox_policy

    sandbox_policy(sandbox, Config())
    assert approval_choice(approval) == approval
