"""What a ``Session`` is given: frozen :class:`SessionSettings` and the :class:`SessionServices`
built for it (by ``mini_codex.host``, the one place a session is assembled).

The session owns its own state (history, recording, approvals, hooks, the turn state); everything
it reads and does not own comes from here, so it holds no defaults and no wiring of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_codex.config import Config
from mini_codex.models.base import ModelClient, Prompt
from mini_codex.models.retry import RetryPolicy
from mini_codex.policy.rules import RuleSet
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback
from mini_codex.runtime.capture import CaptureSettings
from mini_codex.runtime.tool_router import RegisteredTool

if TYPE_CHECKING:  # the MCP SDK is imported only when MCP servers are configured (issue 13)
    from mini_codex.mcp.client import ClientFactory

__all__ = ["SessionServices", "SessionSettings"]


@dataclass(frozen=True)
class SessionSettings:
    """The values a session runs with; none changes while it is open."""

    cwd: Path
    """Resolved."""
    home: Path
    config: Config
    model: str
    sandbox: SandboxPolicy
    approval_policy: ApprovalPolicy
    base_instructions: str
    shell: str
    env: Mapping[str, str]
    """The environment of tool child processes."""
    timezone: str
    clock: Callable[[], datetime]
    resume_path: Path | None = None
    persist: bool = True
    output_schema: dict[str, Any] | None = None
    environ: Mapping[str, str] | None = None
    """The process environment, read only for variables the config names (MCP)."""


@dataclass(frozen=True)
class SessionServices:
    """The collaborators of a session (the client's owner closes it, not the session)."""

    client: ModelClient
    tools: Sequence[RegisteredTool]
    capture: CaptureSettings
    """The session adds its hooks, approvals and warnings to these."""
    rules: RuleSet
    retry: RetryPolicy
    approval_callback: ApprovalCallback | None = None
    mcp_factory: ClientFactory | None = None
    on_event: Callable[[SessionEvent], None] | None = None
    on_request: Callable[[Prompt], None] | None = None
