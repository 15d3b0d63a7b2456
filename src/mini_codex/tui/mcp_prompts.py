"""MCP prompts as slash commands: ``/mcp__<server>__<prompt> key=value …``.

Every prompt of every ready MCP server of the session (``McpRuntime.prompts()``) is a command
named ``mcp__<server>__<prompt>`` (the prompt's own name, as ``mcp status`` prints it). Codex
0.169's TUI has no MCP prompt commands; the arguments are handled as its saved-prompt commands
handle theirs: the rest of the line is split with shell quoting rules and every word must be
``name=value`` (quote a value with spaces: ``city="New York"``); a name the prompt does not
declare, or a required argument left out, is refused with one line naming them.

Running a command fetches the prompt (``prompts/get``) and sends its messages as the next user
message: the text parts in order, an embedded text resource as its text, anything else (an
image, a binary resource, a link) as a one-line placeholder naming it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text

if TYPE_CHECKING:
    import mcp_types

    from mini_codex.host import Session

__all__ = [
    "PREFIX",
    "PromptArgumentError",
    "PromptCommand",
    "parse_arguments",
    "prompt_commands",
    "prompt_text",
    "run_prompt_command",
]

PREFIX = "mcp__"


class PromptArgumentError(ValueError):
    """The words after a prompt command do not fit its arguments (the message says how)."""


@dataclass(frozen=True)
class PromptCommand:
    server: str
    prompt: mcp_types.Prompt

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.server}__{self.prompt.name}"

    @property
    def arguments(self) -> list[tuple[str, bool]]:
        """``(name, required)`` of each declared argument, in order."""
        return [(arg.name, bool(arg.required)) for arg in self.prompt.arguments or ()]

    @property
    def help(self) -> str:
        hint = " ".join(
            f"{name}=…" if required else f"[{name}=…]" for name, required in self.arguments
        )
        about = self.prompt.description or self.prompt.title or f"prompt of {self.server}"
        return f"{hint}  {about}" if hint else about


def prompt_commands(session: Session | None) -> list[PromptCommand]:
    """The prompt commands of the session's ready MCP servers (server, then prompt order)."""
    runtime = session.mcp if session is not None else None
    if runtime is None:
        return []
    return [
        PromptCommand(server, prompt)
        for server, prompts in runtime.prompts().items()
        for prompt in prompts
    ]


def parse_arguments(command: PromptCommand, rest: str) -> dict[str, str]:
    """The ``name=value`` words of ``rest`` as the prompt's arguments (see the module docs)."""
    shown = f"/{command.name}"
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise PromptArgumentError(f"{shown}: cannot split the arguments: {exc}") from None
    declared = [name for name, _ in command.arguments]
    values: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            raise PromptArgumentError(
                f"{shown}: expected name=value, got {word!r} (quote values with spaces)"
            )
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise PromptArgumentError(f"{shown}: unknown argument {key!r} (arguments: {known})")
        values[key] = value
    missing = [name for name, required in command.arguments if required and name not in values]
    if missing:
        raise PromptArgumentError(
            f"{shown}: missing required argument(s) {', '.join(missing)} (give them as name=value)"
        )
    return values


def _content_text(content: Any) -> str:
    kind = getattr(content, "type", None)
    if kind == "text":
        return str(content.text)
    if kind == "resource":
        resource = content.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return str(text)
        return f"[binary resource {resource.uri} ({resource.mime_type or 'unknown type'})]"
    if kind == "resource_link":
        return f"[resource {content.uri}]"
    return f"[{kind or 'unknown'} content ({getattr(content, 'mime_type', None) or 'no type'})]"


def prompt_text(result: mcp_types.GetPromptResult) -> str:
    """The user message a fetched prompt becomes (its messages' parts, blank-line separated)."""
    return "\n\n".join(_content_text(message.content) for message in result.messages).strip()


class PromptUi(Protocol):
    session: Session | None

    def note(self, text: Text | str) -> None: ...

    def send(self, text: str) -> None: ...


async def run_prompt_command(
    ui: PromptUi, commands: Sequence[PromptCommand], name: str, rest: str
) -> None:
    """``/NAME REST``: fetch the prompt and send it as the next message (or say why not)."""
    from mini_codex.errors import MiniCodexError

    found = [command for command in commands if command.name == name]
    runtime = ui.session.mcp if ui.session is not None else None
    if not found or runtime is None:
        unknown = f"unknown MCP prompt /{name} (/mcp lists the servers and their prompts)"
        ui.note(Text(unknown, style="red"))
        return
    command = found[0]
    try:
        arguments = parse_arguments(command, rest)
        result = await runtime.get_prompt(command.server, command.prompt.name, arguments)
    except PromptArgumentError as exc:
        ui.note(Text(str(exc), style="red"))
        return
    except MiniCodexError as exc:
        ui.note(Text(f"/{name}: {exc}", style="red"))
        return
    text = prompt_text(result)
    if not text:
        ui.note(Text(f"/{name}: the prompt is empty; nothing sent", style="yellow"))
        return
    ui.send(text)
