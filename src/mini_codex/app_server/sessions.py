"""The one place the app-server opens a session: through ``host/`` (``host.open_session``).

Every thread (``thread/start``, ``thread/resume``, ``thread/fork``) is a ``host.SessionSpec``
resolved against the config (``host.resolve_session``: every refusal happens there) and opened
with ``host.open_session``. The values taken from the process come in a ``host.HostEnvironment``
that the front end (``cli/app_server_cmd.py``) builds; the app-server itself reads no
environment. One model client per model and provider serves every thread of the process
(``ClientPool``: threads share its connection pool; a ``scripted:PATH`` model continues one
script across turns); the pool is closed when the server ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_codex.config import Config
from mini_codex.host import (
    HostEnvironment,
    ModelChoice,
    SessionSpec,
    load_host_config,
    read_recorded,
    resolve_session,
)
from mini_codex.host.assemble import default_base_instructions
from mini_codex.host.open import open_session
from mini_codex.models.base import ModelClient
from mini_codex.protocol.policy import ApprovalPolicy, SandboxMode
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback

if TYPE_CHECKING:
    from mini_codex.host import Session
    from mini_codex.mcp.elicitation import ElicitationHandler

__all__ = ["ClientPool", "HostValues", "ThreadSpec", "open_thread_session"]


class ClientPool:
    """One model client per model and provider table, for the whole server."""

    def __init__(self) -> None:
        self._clients: dict[tuple[str, str | None, str], ModelClient] = {}

    def client(self, choice: ModelChoice) -> ModelClient:
        provider = choice.provider.model_dump_json() if choice.provider is not None else ""
        key = (choice.model, choice.provider_name, provider)
        if key not in self._clients:
            self._clients[key] = choice.create()
        return self._clients[key]

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()


@dataclass(frozen=True)
class HostValues:
    """What the front end read from the process, given explicitly."""

    env: HostEnvironment
    overrides: tuple[str, ...] = ()
    """``-c key=value`` overrides of the command line."""
    user_agent: str = "mini-codex"
    clients: ClientPool = field(default_factory=ClientPool)

    @property
    def home(self) -> Path:
        return self.env.home

    @property
    def codex_home(self) -> Path:
        return self.env.codex_home or self.env.user_home / ".codex"

    def load_config(self, extra: dict[str, Any]) -> Config:
        """config.toml + ``-c`` overrides + the given keys (``thread/start.config``)."""
        return load_host_config(self.env.home, list(self.overrides), extra=extra or None)


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
    elicitation_callback: ElicitationHandler | None = None,
) -> AsyncIterator[Session]:
    """Open the session of one thread through ``host.open_session``.

    ``elicitation_callback`` answers the MCP servers' elicitation requests (None declines).
    ``MiniCodexError`` (bad config, unknown model, a refused cwd, a locked rollout) is raised
    before the session exists."""
    config = host.load_config(spec.config)
    recorded = read_recorded(spec.resume_path) if spec.resume_path is not None else None
    session_spec = SessionSpec(
        cwd=spec.cwd,
        model=spec.model,
        sandbox=spec.sandbox,
        approval=spec.approval_policy,
        resume=recorded,
        persist=not spec.ephemeral,
    )
    resolved = resolve_session(session_spec, config, host.env)
    async with open_session(
        resolved,
        host.env,
        client=host.clients.client(resolved.model),
        on_event=on_event,
        approval_callback=approval_callback,
        elicitation_callback=elicitation_callback,
        base_instructions=_instructions(spec),
    ) as session:
        yield session
