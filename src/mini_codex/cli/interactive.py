"""``mini-codex [PROMPT]`` and ``mini-codex resume`` without a prompt: the interactive UI.

This module turns argv, the environment and config into a ``SessionOpener`` (the same options as
``exec``) and hands it to ``mini_codex.tui``, which is loaded only here (Textual is slow to import).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from mini_codex.cli.env import (
    load_effective_config,
    mini_codex_home,
)
from mini_codex.cli.run import (
    approval_choice,
    cli_session_options,
    client_for,
    sandbox_policy,
    session_cwd,
)
from mini_codex.errors import MiniCodexError
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback
from mini_codex.tools.images import load_image

if TYPE_CHECKING:
    from mini_codex.runtime.session import Session


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
    config = load_effective_config(home, options.overrides)
    model_name = options.model or config.model
    policy = sandbox_policy(options.sandbox, config)
    approval_policy = approval_choice(options.approval)
    base_cwd = options.cd

    @asynccontextmanager
    async def opener(
        resume: Path | None,
        approval_callback: ApprovalCallback,
        on_event: Callable[[SessionEvent], None],
    ) -> AsyncIterator[Session]:
        # The runtime (MCP SDK, model clients) takes a second to import: off the UI's loop.
        await anyio.to_thread.run_sync(importlib.import_module, "mini_codex.runtime.session")
        from mini_codex.runtime.session import Session

        cwd = session_cwd(base_cwd, resume)
        client = client_for(model_name, config)
        session_options = cli_session_options(
            cwd,
            home,
            client,
            config,
            model_name,
            policy,
            resume_path=resume,
            approval_policy=approval_policy,
            approval_callback=approval_callback,
            on_event=on_event,
        )
        try:
            async with Session.open(session_options) as session:
                yield session
        finally:
            with anyio.CancelScope(shield=True):
                await client.aclose()

    return opener


def run_interactive(
    options: UiOptions, *, prompt: str | None = None, resume: Path | str | None = None
) -> int:
    """Run the UI on this terminal; ``resume`` is a rollout, None (new) or ``"pick"``."""
    home = mini_codex_home()
    if options.cd is not None and not options.cd.is_dir():
        raise MiniCodexError(f"--cd {options.cd}: not a directory")
    images = tuple(load_image(path) for path in options.images)  # refused before the UI starts
    opener = make_opener(options, home)
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise MiniCodexError(
            "the interactive UI needs a terminal; use `mini-codex exec PROMPT` in scripts"
        )
    from mini_codex.tui.run import build_app, run_ui

    app = build_app(
        opener,  # type: ignore[arg-type]
        target=resume,
        home=home,
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
