"""Opening a session: the only caller of ``Session.open`` and the owner of the model client.

- :func:`open_session` opens a :class:`~mini_codex.host.spec.ResolvedSession` in a
  :class:`~mini_codex.host.environment.HostEnvironment`: it creates the model client (and closes
  it when the session ends, also on error or cancellation), applies the config's
  ``shell_environment_policy`` to the host's variables, and passes what the front end plugs in
  (event and request callbacks, the approval callback). ``client=`` lends a client instead (its
  owner closes it: the SDK's ``model_client``, ``--oss``'s embedded server).
- :func:`open_options` opens a low-level :class:`~mini_codex.host.assemble.SessionOptions`
  (tests, benchmarks, embedders that build everything themselves).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from mini_codex.config import Config
from mini_codex.host.assemble import SessionOptions, assemble
from mini_codex.host.environment import HostEnvironment
from mini_codex.host.spec import ResolvedSession
from mini_codex.models.base import ModelClient, Prompt
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback
from mini_codex.world_state import WorldStateExtension

if TYPE_CHECKING:
    from mini_codex.runtime.session import Session

__all__ = [
    "installed_extensions",
    "open_options",
    "open_session",
    "session_options",
    "tool_environment",
]


def tool_environment(env: HostEnvironment, config: Config) -> dict[str, str]:
    """The environment of tool commands under ``config`` (see ``HostEnvironment.child_env``)."""
    if env.child_env is not None:
        return dict(env.child_env)
    from mini_codex.policy.environment import child_environment

    return child_environment(env.variables, config.shell_environment_policy)


def installed_extensions() -> list[WorldStateExtension]:
    """The world-state extensions installed in this Python (entry points of the
    ``mini_codex.world_state`` group, see docs/extensions.md)."""
    import importlib.metadata

    from mini_codex.world_state.extensions import EXTENSION_ENTRY_POINT_GROUP, load_extensions

    return load_extensions(importlib.metadata.entry_points(group=EXTENSION_ENTRY_POINT_GROUP))


def session_options(
    resolved: ResolvedSession,
    env: HostEnvironment,
    client: ModelClient,
    *,
    on_event: Callable[[SessionEvent], None] | None = None,
    on_request: Callable[[Prompt], None] | None = None,
    approval_callback: ApprovalCallback | None = None,
    **extra: Any,
) -> SessionOptions:
    """The low-level options of ``resolved`` in ``env`` (``extra``: further option fields; by
    default the installed world-state extensions and the user's ``~/.agents/skills``)."""
    extra.setdefault("user_home", env.user_home)
    extra.setdefault("extensions", installed_extensions())
    return SessionOptions(
        cwd=resolved.cwd,
        home=env.home,
        client=client,
        config=resolved.config,
        model=resolved.model.slug,
        sandbox=resolved.sandbox,
        approval_policy=resolved.approval_policy,
        shell=env.shell,
        env=tool_environment(env, resolved.config),
        timezone=env.timezone,
        resume_path=resolved.resume_path,
        persist=resolved.persist,
        output_schema=resolved.output_schema,
        on_event=on_event,
        on_request=on_request,
        environ=dict(env.variables),
        approval_callback=approval_callback,
        **extra,
    )


@asynccontextmanager
async def open_options(options: SessionOptions) -> AsyncIterator[Session]:
    """Open the session ``options`` describe (the caller owns ``options.client``)."""
    from mini_codex.runtime.session import Session

    if options.config.features.multi_agent:  # sub-agents (issue 28): host/agents
        from mini_codex.host.agents.wiring import open_with_agents

        async with open_with_agents(options, open_options) as session:
            yield session
        return
    settings, services = assemble(options)
    async with Session.open(settings, services) as session:
        yield session


@asynccontextmanager
async def open_session(
    resolved: ResolvedSession,
    env: HostEnvironment,
    *,
    client: ModelClient | None = None,
    on_event: Callable[[SessionEvent], None] | None = None,
    on_request: Callable[[Prompt], None] | None = None,
    approval_callback: ApprovalCallback | None = None,
    **extra: Any,
) -> AsyncIterator[Session]:
    """Open ``resolved`` (see the module docstring); ``extra``: further ``SessionOptions``."""
    owned = client is None
    model_client = resolved.model.create() if client is None else client
    try:
        options = session_options(
            resolved,
            env,
            model_client,
            on_event=on_event,
            on_request=on_request,
            approval_callback=approval_callback,
            **extra,
        )
        async with open_options(options) as session:
            yield session
    finally:
        if owned:
            with anyio.CancelScope(shield=True):
                await model_client.aclose()
