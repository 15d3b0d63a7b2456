"""The plain ``mini-codex [OPTIONS] [PROMPT]`` command line, read without typer (start-up).

Typer takes ~0.05 s to import and, since 0.29, validates every option value of a command with a
pydantic ``TypeAdapter`` (another ~0.06 s), all before the UI could paint its composer. The
console entry point (``entry.py``) therefore reads the common UI command line here first: only
the UI's own options with their value as the next word (``-m``/``--model``, ``-C``/``--cd``,
``-s``/``--sandbox``, ``-a``/``--ask-for-approval``, ``-c``/``--config``, ``-i``/``--image``),
then the prompt — the first other word that is not a command, with every word after it, as
``main.py``'s group reads it. Anything else (a command, ``--help``, ``--version``, ``--model=X``,
``--``, an option missing its value) is left to typer (``cli/main.py``), which owns the command
line and its errors; ``tests/cli/test_ui_argv.py`` checks that both read the same options and
that typer registers exactly :data:`COMMANDS`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

__all__ = ["COMMANDS", "VALUE_OPTIONS", "plain_ui_line", "run_plain_ui"]

COMMANDS = frozenset(
    {
        *("exec", "resume", "compact", "rollout", "sessions", "batch", "mcp", "plugin"),
        *("execpolicy", "ui", "exec-server", "app-server"),
    }
)
"""The sub-commands ``cli/main.py`` registers (a first word naming one is not a prompt); defined
here, without typer, and used by both."""

_FIELDS = {
    "-m": "model",
    "--model": "model",
    "-C": "cd",
    "--cd": "cd",
    "-s": "sandbox",
    "--sandbox": "sandbox",
    "-a": "approval",
    "--ask-for-approval": "approval",
    "-c": "overrides",
    "--config": "overrides",
    "-i": "images",
    "--image": "images",
}
VALUE_OPTIONS = frozenset(_FIELDS)
"""The group's options that take a value (both readers skip their value looking for a prompt)."""


def plain_ui_line(argv: Sequence[str]) -> tuple[dict[str, object], str | None] | None:
    """``UiOptions`` fields and the prompt of a plain UI command line, or None when typer must
    read ``argv`` (see the module docstring)."""
    fields: dict[str, object] = {}
    overrides: list[str] = []
    images: list[Path] = []
    words = list(argv[1:])
    index = 0
    while index < len(words):
        word = words[index]
        if word in _FIELDS:
            if index + 1 >= len(words) or words[index + 1].startswith("-"):
                return None
            value = words[index + 1]
            name = _FIELDS[word]
            if name == "overrides":
                overrides.append(value)
            elif name == "images":
                images.append(Path(value))
            else:
                fields[name] = Path(value) if name == "cd" else value
            index += 2
            continue
        if word.startswith("-") or word in COMMANDS:
            return None
        break
    prompt = " ".join(words[index:]) if index < len(words) else None
    if overrides:
        fields["overrides"] = overrides
    if images:
        fields["images"] = tuple(images)
    return fields, prompt


def run_plain_ui(argv: Sequence[str]) -> None:
    """Run the UI when ``argv`` is a plain UI command line (and exit); otherwise return. When
    the typer application is already imported (an embedder or a test set it up, or replaced it),
    it runs the line: reading it here would save nothing."""
    if "mini_codex.cli.main" in sys.modules:
        return
    line = plain_ui_line(argv)
    if line is not None:
        _run(*line)


def _run(fields: dict[str, object], prompt: str | None) -> NoReturn:
    from mini_codex.cli.interactive import UiOptions, launch

    launch(UiOptions(**fields), prompt)  # type: ignore[arg-type]
