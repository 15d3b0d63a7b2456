"""The one place the app-server opens a session (the adapter to the session assembly).

Every thread (``thread/start``, ``thread/resume``, ``thread/fork``) is opened through
``open_thread_session``. The values a session needs from the process (homes, shell, timezone, the
config loader, the model-client factory, the child environment) come in a ``HostValues`` that the
front end (``cli/app_server_cmd.py``) builds; the app-server itself reads no environment. When the
shared ``host/`` package lands, this module is the only one to point at ``host.open_session``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from mini_codex.config import Config
from mini_codex.models.base import ModelClient
from mini_codex.protocol.policy import ApprovalPolicy, SandboxMode, SandboxPolicy
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback
from mini_codex.runtime.session import Session, SessionOptions, default_base_instructions

__all__ = ["HostValues", "ThreadSpec", "open_thread_session", "sandbox_policy_for"]


@dataclass(frozen=True)
class HostValues:
    """What the front end read from the process, given explicitly."""

    home: Path
    codex_home: Path
    load_config: Callable[[dict[str, Any]], Config]
    """Config file + ``-c`` overrides + the given keys (``thread/start.config``)."""
    client_for: Callable[[str, Config], tuple[ModelClient, bool]]
    """The model client for a model name and whether the caller closes it."""
    child_env: Callable[[Config], Mapping[str, str]] = lambda _config: {}
    shell: str = "/bin/bash"
    timezone: str = "Etc/UTC"
    environ: Mapping[str, str] = field(default_factory=dict)
    user_agent: str = "mini-codex"


@dataclass(frozen=True)
class ThreadSpec:
    """One thread's settings (``thread/start`` / ``thread/resume`` / ``thread/fork`` params)."""

    cwd: Path
    model: str | None = None
    approval_policy: ApprovalPolicy | None = None
    sandbox: SandboxMode | None = None
    config: dict[str, Any] = field(default_factory=dict)
    base_instructions: str | None = None
    developer_instructions: str | None = None
    resume_path: Path | None = None
    ephemeral: bool = False


def sandbox_policy_for(mode: SandboxMode | None, config: Config) -> SandboxPolicy | None:
    match mode:
        case None:
            return None
        case "read-only":
            return SandboxPolicy.read_only()
        case "danger-full-access":
            return SandboxPolicy.danger_full_access()
        case "workspace-write":
            settings = config.sandbox_workspace_write
            return SandboxPolicy.workspace_write(
                tuple(settings.writable_roots),
                network_access=settings.network_access,
                exclude_tmpdir_env_var=settings.exclude_tmpdir_env_var,
                exclude_slash_tmp=settings.exclude_slash_tmp,
            )


def _instructions(spec: ThreadSpec) -> str | None:
    if spec.developer_instructions is None:
        return spec.base_instructions
    base = spec.base_instructions or default_base_instructions()
    return f"{base}\n\n{spec.developer_instructions}"


@asynccontextmanager
async def open_thread_session(
    host: HostValues,
    spec: ThreadSpec,
    *,
    on_event: Callable[[SessionEvent], None],
    approval_callback: ApprovalCallback,
) -> AsyncIterator[Session]:
    """Open the session of one thread; the model client is closed with it when owned.

    ``MiniCodexError`` (bad config, unknown model, a locked rollout) is raised before the
    session exists."""
    config = host.load_config(spec.config)
    model = spec.model or config.model
    client, owned = host.client_for(model, config)
    options = SessionOptions(
        cwd=spec.cwd,
        home=host.home,
        client=client,
        config=config,
        model="scripted" if model.startswith("scripted:") else model,
        sandbox=sandbox_policy_for(spec.sandbox, config),
        approval_policy=spec.approval_policy,
        base_instructions=_instructions(spec),
        shell=host.shell,
        env=host.child_env(config),
        timezone=host.timezone,
        resume_path=spec.resume_path,
        persist=not spec.ephemeral,
        on_event=on_event,
        environ=host.environ,
        approval_callback=approval_callback,
    )
    try:
        async with Session.open(options) as session:
            yield session
    finally:
        if owned:
            with anyio.CancelScope(shield=True):
                await client.aclose()
