"""The slash commands: one table, each entry a name, a one-line help and an async handler.

``/compact`` calls ``Session.compact()`` (manual compaction: the summarizer's answer replaces the
history; a failure leaves the history as it was and says so).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio
from rich.text import Text

from mini_codex.tui.agent_cells import agents_text
from mini_codex.tui.cells import patch_text, token_status

if TYPE_CHECKING:
    from mini_codex.host import Session

APPROVAL_POLICIES = ("untrusted", "on-failure", "on-request", "never")
AGENTS_MD_SKELETON = """\
# AGENTS.md

Guidance for coding agents working in this repository.

## Project

<!-- What this project is and how it is laid out. -->

## Build and test

<!-- The commands that build, lint and test it, e.g. `make test`. -->

## Conventions

<!-- Style, naming, and anything an agent must not do. -->
"""


class SlashContext(Protocol):
    session: Session | None
    token_info: dict[str, object] | None

    def note(self, text: Text | str) -> None: ...

    def new_session(self) -> None: ...

    def resume_session(self) -> None: ...

    def quit(self) -> None: ...

    def refresh_status(self) -> None: ...

    def attach_image(self, path: Path) -> None: ...

    def drop_images(self) -> None: ...


Handler = Callable[[SlashContext, str], Awaitable[None]]


@dataclass(frozen=True)
class SlashCommand:
    name: str
    help: str
    run: Handler
    needs_session: bool = True


def _session(ui: SlashContext) -> Session:
    assert ui.session is not None
    return ui.session


async def _status(ui: SlashContext, arg: str) -> None:
    session = _session(ui)
    rows = [
        ("model", session.model),
        ("provider", session.config.model_provider),
        ("cwd", str(session.cwd)),
        ("sandbox", session.sandbox.mode),
        ("approval policy", session.approval_policy),
        ("session id", session.session_id),
        ("rollout", str(session.rollout_path) if session.rollout_path else "(not persisted)"),
        ("tokens", token_status(ui.token_info) or "none used yet"),
    ]
    text = Text("status\n", style="bold")
    for key, value in rows:
        text.append(f"  {key:<16}", style="dim")
        text.append(f"{value}\n")
    text.rstrip()
    ui.note(text)


async def _model(ui: SlashContext, arg: str) -> None:
    session = _session(ui)
    if not arg:
        ui.note(f"model: {session.model} (/model NAME changes it for the next turn)")
        return
    session.model = arg
    ui.note(f"model set to {arg} from the next turn")
    ui.refresh_status()


async def _approvals(ui: SlashContext, arg: str) -> None:
    session = _session(ui)
    if arg not in APPROVAL_POLICIES:
        choices = ", ".join(APPROVAL_POLICIES)
        ui.note(f"approval policy: {session.approval_policy} (/approvals one of: {choices})")
        return
    session.approval_policy = arg  # type: ignore[assignment]  # checked against the list
    ui.note(f"approval policy set to {arg}")
    ui.refresh_status()


async def _compact(ui: SlashContext, arg: str) -> None:
    ui.note("compacting the conversation…")
    summary = await _session(ui).compact()
    if summary is None:
        failed = "compaction failed (the error is above); the conversation is unchanged"
        ui.note(Text(failed, style="red"))
        return
    ui.note("conversation compacted")


async def workspace_diff(cwd: Path) -> str:
    """``git diff`` of the workspace, untracked files included (as additions)."""
    tracked = await anyio.run_process(
        ["git", "-C", str(cwd), "diff", "--no-color", "HEAD", "--"], check=False
    )
    if tracked.returncode != 0:
        tracked = await anyio.run_process(
            ["git", "-C", str(cwd), "diff", "--no-color"], check=False
        )
        if tracked.returncode != 0:
            raise RuntimeError(tracked.stderr.decode(errors="replace").strip() or "git diff failed")
    parts = [tracked.stdout.decode(errors="replace")]
    listed = await anyio.run_process(
        ["git", "-C", str(cwd), "ls-files", "--others", "--exclude-standard", "-z"], check=False
    )
    for name in filter(None, listed.stdout.decode(errors="replace").split("\0")):
        added = await anyio.run_process(
            ["git", "-C", str(cwd), "diff", "--no-color", "--no-index", "--", "/dev/null", name],
            check=False,
        )
        parts.append(added.stdout.decode(errors="replace"))
    return "".join(parts)


async def _diff(ui: SlashContext, arg: str) -> None:
    try:
        diff = await workspace_diff(_session(ui).cwd)
    except (OSError, RuntimeError) as exc:
        ui.note(Text(f"/diff: {exc}", style="red"))
        return
    ui.note(patch_text(diff) if diff.strip() else Text("no changes", style="dim"))


async def _new(ui: SlashContext, arg: str) -> None:
    ui.new_session()


async def _resume(ui: SlashContext, arg: str) -> None:
    ui.resume_session()


async def _init(ui: SlashContext, arg: str) -> None:
    path = _session(ui).cwd / "AGENTS.md"
    if path.exists():
        ui.note(f"{path} already exists; left unchanged")
        return
    path.write_text(AGENTS_MD_SKELETON, encoding="utf-8")
    ui.note(f"wrote {path} (a skeleton: fill in the sections)")


async def _mcp(ui: SlashContext, arg: str) -> None:
    session = _session(ui)
    published = session.mcp.published if session.mcp is not None else None
    if published is None or not published.config:
        ui.note("no MCP servers configured ([mcp_servers.NAME] in config.toml)")
        return
    text = Text("MCP servers\n", style="bold")
    for name in published.config:
        connection = published.connections.get(name)
        status: str = connection.status if connection is not None else "not started"
        if connection is not None and connection.needs_login:
            status = "needs login"
        text.append(f"  {name:<20} {status}\n")
        if connection is not None and connection.status == "failed" and connection.error:
            text.append(f"    {connection.error.splitlines()[0]}\n", style="red")
        catalog = connection.catalog if connection is not None else None
        for prompt in catalog.prompts if catalog is not None else ():
            arguments = "".join(f" {arg.name}=…" for arg in prompt.arguments or ())
            text.append(f"    prompt /mcp__{name}__{prompt.name}{arguments}\n", style="dim")
    text.rstrip()
    ui.note(text)


async def _agents(ui: SlashContext, arg: str) -> None:
    agents = getattr(_session(ui), "agents", None)
    if agents is None:
        ui.note("sub-agents are off (features.multi_agent = true in config.toml turns them on)")
        return
    ui.note(agents_text(agents.children.values()))


async def _image(ui: SlashContext, arg: str) -> None:
    if not arg:
        ui.drop_images()
        return
    ui.attach_image(_session(ui).cwd / arg)


async def _quit(ui: SlashContext, arg: str) -> None:
    ui.quit()


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("status", "model, policies, session and token usage", _status),
    SlashCommand("model", "NAME: the model of the next turns", _model),
    SlashCommand("approvals", "POLICY: untrusted | on-failure | on-request | never", _approvals),
    SlashCommand("compact", "summarise the conversation to free context", _compact),
    SlashCommand("diff", "git diff of the workspace, untracked files included", _diff),
    SlashCommand("new", "start a new session", _new, needs_session=False),
    SlashCommand("resume", "pick a recorded session to continue", _resume, needs_session=False),
    SlashCommand("init", "write an AGENTS.md skeleton in the workspace", _init),
    SlashCommand("mcp", "MCP servers and their state", _mcp),
    SlashCommand("image", "PATH: attach an image to the next message (no PATH: drop)", _image),
    SlashCommand("quit", "leave mini-codex", _quit, needs_session=False),
    SlashCommand("agents", "the session's sub-agents and their status", _agents),
)
BY_NAME = {command.name: command for command in COMMANDS}


def complete(query: str) -> list[SlashCommand]:
    return [command for command in COMMANDS if command.name.startswith(query.lower())]


def parse(text: str) -> tuple[SlashCommand | None, str, str]:
    """``(command, argument, name typed)`` of a ``/name arg`` line."""
    name, _, arg = text.strip().removeprefix("/").partition(" ")
    return BY_NAME.get(name.lower()), arg.strip(), name
