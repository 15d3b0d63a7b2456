"""``mini-codex [PROMPT]`` and ``mini-codex resume`` without a prompt: the interactive UI.

This module turns argv, the environment and config into a ``SessionOpener`` (the same options as
``exec``) and hands it to ``mini_codex.tui``, which is loaded only here (Textual is slow to import).

Start-up (issue 30): the composer is on the screen before anything of the session is imported.
Before the UI starts, only what is cheap to refuse is checked (``--cd``, the ``-i`` images, the
terminal, the spelling of ``--sandbox`` and ``--ask-for-approval``); the config, the host and the
runtime are loaded by the opener, on a worker thread, when the first session opens, which the
UI does after its first frame. A prompt sent before then is sent when the session opens (the app
queues it); a failure to open (a bad ``config.toml``, an unknown model) is shown in the
transcript, and the config's unknown-key warning as a warning note.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import anyio

from mini_codex.cli.boundary import exit_with
from mini_codex.cli.signals import settle_heap
from mini_codex.errors import MiniCodexError
from mini_codex.tools.images import load_image

if TYPE_CHECKING:
    from mini_codex.config import Config
    from mini_codex.host import HostEnvironment, Session
    from mini_codex.mcp.elicitation import ElicitationHandler
    from mini_codex.protocol.session_events import SessionEvent
    from mini_codex.runtime.approvals import ApprovalCallback


@dataclass(frozen=True)
class UiOptions:
    model: str | None = None
    cd: Path | None = None
    sandbox: str | None = None
    approval: str | None = None
    overrides: list[str] = field(default_factory=list)
    images: tuple[Path, ...] = ()
    """``-i FILE``: attached to the opening prompt (or to the first message sent)."""


def ui_home() -> Path:
    """``$MINI_CODEX_HOME``, default ``~/.mini-codex``: what ``HostEnvironment.from_variables``
    makes of the environment (``cli/env.py`` would import the host and the config, which the UI
    loads after its first frame)."""
    value = os.environ.get("MINI_CODEX_HOME")
    return Path(value).expanduser() if value else Path.home() / ".mini-codex"


SANDBOXES = (None, "read-only", "workspace-write", "danger-full-access")
APPROVALS = (None, "untrusted", "on-failure", "on-request", "never")
"""The spellings let through without importing the host (it accepts them all: tested)."""


def _refuse_bad_choices(options: UiOptions) -> None:
    """An unknown ``--sandbox`` or ``--ask-for-approval`` is refused before the UI starts, by
    the host's own checks; the usual spellings skip them (the host and the config take a third
    of a second to import, which the UI does after its first frame)."""
    if options.sandbox in SANDBOXES and options.approval in APPROVALS:
        return
    from mini_codex.config import Config
    from mini_codex.host import approval_choice, sandbox_policy

    sandbox_policy(options.sandbox, Config())  # only the spelling: the config is read later
    approval_choice(options.approval)


def _load_settings(options: UiOptions, home: Path) -> tuple[HostEnvironment, Config, list[str]]:
    """The host, the environment and the config (with its warnings): the first session's work,
    on a worker thread (the runtime takes a second to import: off the UI's loop)."""
    importlib.import_module("mini_codex.host.open")
    from mini_codex.cli.env import host_environment
    from mini_codex.host import load_host_config

    env = replace(host_environment(), home=home)
    warnings: list[str] = []
    config = load_host_config(env.home, options.overrides, warn=warnings.append)
    return env, config, warnings


def make_opener(options: UiOptions, home: Path) -> Callable[..., object]:
    """A ``SessionOpener``: every call opens a fresh session (new, or resumed from a rollout).
    The config is read when the first session opens, once."""
    _refuse_bad_choices(options)
    loaded: list[tuple[HostEnvironment, Config]] = []

    @asynccontextmanager
    async def opener(
        resume: Path | None,
        approval_callback: ApprovalCallback,
        on_event: Callable[[SessionEvent], None],
        *,
        elicitation_callback: ElicitationHandler | None = None,
    ) -> AsyncIterator[Session]:
        if not loaded:
            env, config, warnings = await anyio.to_thread.run_sync(_load_settings, options, home)
            loaded.append((env, config))
            if warnings:
                from mini_codex.protocol.session_events import WarningEvent

                for warning in warnings:
                    on_event(WarningEvent(message=warning))
        env, config = loaded[0]
        from mini_codex.cli.env import cli_environments
        from mini_codex.host import (
            SessionSpec,
            open_session,
            read_recorded,
            resolve_session,
        )

        base = SessionSpec(
            cwd=options.cd, model=options.model, sandbox=options.sandbox, approval=options.approval
        )
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
    home = ui_home()
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
    settle_heap()  # textual is imported: the collector is on while the UI runs
    code = anyio.run(run_ui, app)
    session_id = app.last_session_id
    if session_id:
        sys.stdout.write(
            f"session {session_id} saved; continue with: mini-codex resume {session_id}\n"
        )
    return code


def launch(options: UiOptions, prompt: str | None) -> NoReturn:
    """``mini-codex [PROMPT]``: the UI behind the CLI's error boundary (``boundary.exit_with``,
    which imports neither typer nor ``exec``)."""
    exit_with(lambda: run_interactive(options, prompt=prompt))
