"""``mini-codex [PROMPT]`` and ``mini-codex resume`` without a prompt: the interactive UI.

This module turns argv, the environment and config into a ``SessionOpener`` (the same options as
``exec``) and hands it to ``mini_codex.tui``, which is loaded only here (Textual is slow to import).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from mini_codex.cli.env import cli_environments, host_environment, load_effective_config
from mini_codex.errors import MiniCodexError
from mini_codex.host import (
    SessionSpec,
    approval_choice,
    read_recorded,
    resolve_session,
    sandbox_policy,
)
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback
from mini_codex.tools.images import load_image

if TYPE_CHECKING:
    from mini_codex.host import Session
    from mini_codex.mcp.elicitation import ElicitationHandler


@dataclass(frozen=True)
class UiOptions:
    model: str | None = None
    cd: Path | None = None
    sandbox: str | None = None
    approval: str | None = None
    overrides: list[str] = field(default_factory=list)
    images: tuple[Path, ...] = ()
    """``-i FILE``: attached to the opening prompt (or to the first message sent)."""


def make_opener(options: UiOptions, home: Path) -> Callable[..., object]:
    """A ``SessionOpener``: every call opens a fresh session (new, or resumed from a rollout)."""
    env = replace(host_environment(), home=home)
    config = load_effective_config(env.home, options.overrides)
    base = SessionSpec(
        cwd=options.cd, model=options.model, sandbox=options.sandbox, approval=options.approval
    )
    sandbox_policy(options.sandbox, config)  # refused before the UI starts
    approval_choice(options.approval)

    @asynccontextmanager
    async def opener(
        resume: Path | None,
        approval_callback: ApprovalCallback,
        on_event: Callable[[SessionEvent], None],
        *,
        elicitation_callback: ElicitationHandler | None = None,
    ) -> AsyncIterator[Session]:
        # The runtime (MCP SDK, model clients) takes a second to import: off the UI's loop.
        await anyio.to_thread.run_sync(importlib.import_module, "mini_codex.host.open")
        from mini_codex.host import open_session

        recorded = read_recorded(resume, strict=False) if resume is not None else None
        resolved = resolve_session(replace(base, resume=recorded), config, env)
        async with open_session(
            resolved,
            env,
            on_event=on_event,
            approval_callback=approval_callback,
            elicitation_callback=elicitation_callback,
            environments=cli_environments(env),
        ) as session:
            yield session

    return opener


def run_interactive(
    options: UiOptions, *, prompt: str | None = None, resume: Path | str | None = None
) -> int:
    """Run the UI on this terminal; ``resume`` is a rollout, None (new) or ``"pick"``."""
    env = host_environment()
    if options.cd is not None and not options.cd.is_dir():
        raise MiniCodexError(f"--cd {options.cd}: not a directory")
    images = tuple(load_image(path) for path in options.images)  # refused before the UI starts
    opener = make_opener(options, env.home)
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise MiniCodexError(
            "the interactive UI needs a terminal; use `mini-codex exec PROMPT` in scripts"
        )
    from mini_codex.tui.run import build_app, run_ui

    app = build_app(
        opener,  # type: ignore[arg-type]
        target=resume,
        home=env.home,
        initial_prompt=prompt,
        images=images,
    )
    code = anyio.run(run_ui, app)
    session_id = app.last_session_id
    if session_id:
        sys.stdout.write(
            f"session {session_id} saved; continue with: mini-codex resume {session_id}\n"
        )
    return code
