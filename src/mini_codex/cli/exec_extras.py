"""The automation flags of ``exec`` / ``resume`` (Codex's): the prompt from stdin, ``-i/--image``,
``--output-schema``, ``-o/--output-last-message``, ``--json`` (Codex's event schema) versus
``--json-events=mini-codex``. ``run.py`` calls these; the rules live here."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import Annotated, Any, Literal, TextIO

import msgspec
import orjson
import typer

from mini_codex.errors import MiniCodexError
from mini_codex.protocol import InputImage, InputText, Message, ResponseItem
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.exec_events import ExecEventMapper
from mini_codex.runtime.output_schema import check_schema, final_message_error
from mini_codex.tools.images import image_data_url

__all__ = [
    "EphemeralOpt",
    "ExecExtras",
    "ExecJsonOutput",
    "ImageOpt",
    "JsonEventsOpt",
    "JsonFormat",
    "LastMessageOpt",
    "ProfileOpt",
    "SchemaOpt",
    "SkillOpt",
    "SkipGitOpt",
    "json_format",
    "load_output_schema",
    "read_prompt",
    "turn_input",
    "write_last_message",
]

JsonFormat = Literal["codex", "mini-codex"]

JsonEventsOpt = Annotated[
    str | None,
    typer.Option(
        "--json-events",
        help="JSON lines of 'codex' exec events (as --json) or 'mini-codex' session events.",
    ),
]
LastMessageOpt = Annotated[
    Path | None,
    typer.Option("--output-last-message", "-o", help="Write the final agent message to FILE."),
]
SchemaOpt = Annotated[
    Path | None,
    typer.Option("--output-schema", help="JSON Schema FILE the final message must match."),
]
EphemeralOpt = Annotated[
    bool, typer.Option("--ephemeral", help="Do not write a rollout for this session.")
]
SkipGitOpt = Annotated[
    bool,
    typer.Option("--skip-git-repo-check", help="Accepted for Codex compatibility (no check)."),
]
ProfileOpt = Annotated[
    str | None, typer.Option("--profile", "-p", help="Use the [profiles.NAME] table of config.")
]
ImageOpt = Annotated[
    list[Path] | None,
    typer.Option("--image", "-i", help="Attach an image FILE to the prompt (repeatable)."),
]


SkillOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--skill",
        help="Use the skill whose SKILL.md is at PATH (a structured skill input; repeatable).",
    ),
]


class ExecExtras(msgspec.Struct, frozen=True):
    """What the automation flags asked for (defaults: none of them)."""

    json_format: JsonFormat | None = None
    """None: human output; "codex": Codex's exec events; "mini-codex": our session events."""
    output_last_message: Path | None = None
    output_schema: dict[str, Any] | None = None
    ephemeral: bool = False
    images: tuple[Path, ...] = msgspec.field(default=())
    skills: tuple[Path, ...] = msgspec.field(default=())
    """``--skill PATH``: structured skill inputs of the turn."""
    profile: str | None = None
    add_dirs: tuple[Path, ...] = msgspec.field(default=())
    """``--add-dir``: extra writable roots of the workspace-write sandbox."""
    notices: tuple[str, ...] = msgspec.field(default=())
    """Warnings about accepted flags mini-codex cannot honour, printed once when the run starts
    (``codex_flags.flag_notices``)."""


def json_format(as_json: bool, json_events: str | None) -> JsonFormat | None:
    match json_events:
        case None:
            return "codex" if as_json else None
        case "codex" | "mini-codex":
            return json_events
        case _:
            raise MiniCodexError(f"unknown --json-events {json_events!r} (codex, mini-codex)")


def read_prompt(prompt: str | None, stdin: TextIO | None, err: TextIO) -> str:
    """Codex's rules: PROMPT ``-`` (or none) reads the prompt from stdin; a PROMPT given with piped
    stdin gets the stdin text appended as a ``<stdin>`` block."""
    piped = _piped(stdin)
    if prompt is None or prompt == "-":
        if piped and stdin is not None:
            text = stdin.read()
            if text.strip():
                return text
        raise MiniCodexError("a prompt is required (as an argument, or on stdin with '-')")
    if piped and stdin is not None:
        extra = stdin.read()
        if extra.strip():
            err.write("Reading additional input from stdin...\n")
            return f"{prompt}\n\n<stdin>\n{extra.rstrip(chr(10))}\n</stdin>"
    return prompt


def _piped(stdin: TextIO | None) -> bool:
    """stdin is a pipe, a file or a socket (a terminal or ``/dev/null`` is not input)."""
    if stdin is None:
        return False
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return not stdin.isatty()  # an in-memory stream (tests): input unless it says otherwise
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


def turn_input(prompt: str, images: tuple[Path, ...]) -> str | list[ResponseItem]:
    """The user input of a turn: the text alone, or one message with the images after it."""
    if not images:
        return prompt
    parts: list[Any] = [InputText(text=prompt)]
    parts += [InputImage(image_url=image_data_url(path)) for path in images]
    return [Message(role="user", content=parts)]


def load_output_schema(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        value = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise MiniCodexError(f"--output-schema {path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise MiniCodexError(f"--output-schema {path}: not JSON: {exc}") from None
    return check_schema(value, source=f"--output-schema {path}")


def write_last_message(path: Path, text: str | None, err: TextIO) -> None:
    if text is None:
        err.write(f"warning: no last agent message; wrote empty content to {path}\n")
    try:
        path.write_text(text or "", encoding="utf-8")
    except OSError as exc:
        raise MiniCodexError(f"--output-last-message {path}: {exc.strerror or exc}") from None


class ExecJsonOutput:
    """Prints Codex's exec events (one JSON line each) for a session's events; remembers the turn
    outcome for ``-o`` and ``--output-schema``."""

    def __init__(self, stdout: TextIO | None) -> None:
        self.stdout = stdout
        self.mapper = ExecEventMapper()

    def event(self, event: SessionEvent) -> None:
        for exec_event in self.mapper.feed(event):
            if self.stdout is not None:
                self.stdout.write(orjson.dumps(exec_event.to_json()).decode() + "\n")
                self.stdout.flush()

    def finish(self, extras: ExecExtras, err: TextIO) -> int:
        """``-o`` and the ``--output-schema`` check after the turn; 1 when the message fails it."""
        if extras.output_last_message is not None and self.mapper.failed is None:
            write_last_message(extras.output_last_message, self.mapper.final_message, err)
        problem = self.schema_error(extras.output_schema)
        if problem is not None:
            err.write(f"error: {problem}\n")
            return 1
        return 0

    def schema_error(self, schema: dict[str, Any] | None) -> str | None:
        """Why the final message fails ``schema`` (None when it matches, or nothing to check)."""
        if schema is None or self.mapper.failed is not None:
            return None
        return final_message_error(self.mapper.final_message, schema)
