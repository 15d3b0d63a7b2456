"""What a ``Session`` is given: frozen :class:`SessionSettings` and the :class:`SessionServices`
built for it (by ``mini_codex.host``, the one place a session is assembled).

The session owns its own state (history, recording, approvals, hooks, the turn state); everything
it reads and does not own comes from here, so it holds no defaults and no wiring of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from mini_codex.config import Config
from mini_codex.models.base import ModelClient, Prompt
from mini_codex.models.retry import RetryPolicy
from mini_codex.policy.rules import RuleSet
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback, SessionApprovals
from mini_codex.runtime.capture import CaptureSettings
from mini_codex.runtime.contexts import EnvironmentSelection, SessionContext, TurnContext
from mini_codex.runtime.tool_router import RegisteredTool

if TYPE_CHECKING:  # the MCP SDK is imported only when MCP servers are configured (issue 13)
    from mini_codex.environments.manager import ThreadEnvironments
    from mini_codex.mcp.client import ClientFactory
    from mini_codex.mcp.elicitation import ElicitationHandler
    from mini_codex.skills.service import SkillsService

__all__ = ["SessionServices", "SessionSettings"]


class SessionSettings(msgspec.Struct, frozen=True):
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
    thread_id: str | None = None
    """The id of a new session's thread (a spawned agent's, chosen by its parent); None: new."""
    session_meta_extra: Mapping[str, Any] | None = None
    """Further ``session_meta`` fields of a new rollout (a sub-agent's ``source``, its
    ``parent_thread_id``, ``agent_nickname``: ``host/agents``)."""

    def turn_context(
        self,
        session_id: str,
        approvals: SessionApprovals,
        turn_id: str,
        output_schema: dict[str, Any] | None = None,
        *,
        model: str,
        approval_policy: ApprovalPolicy,
        sandbox: SandboxPolicy,
        environments: tuple[EnvironmentSelection, ...] | None = None,
    ) -> TurnContext:
        """The frozen context of a new turn (the date is read from ``clock`` now); ``model``,
        ``approval_policy`` and ``sandbox`` are the session's current ones (the UI's ``/model``
        and ``/approvals`` change them between turns); ``environments`` are the turn's
        selections (issue 26; None: the one local environment)."""
        session = SessionContext(
            session_id=session_id,
            home=self.home,
            config=self.config,
            shell=self.shell,
            env=self.env,
            approvals=approvals,
            never_writable=(self.home,),
        )
        return TurnContext(
            session=session,
            turn_id=turn_id,
            model=model,
            base_instructions=self.base_instructions,
            approval_policy=approval_policy,
            sandbox=sandbox,
            cwd=self.cwd,
            current_date=self.clock().strftime("%Y-%m-%d"),
            timezone=self.timezone,
            environments=(
                environments
                if environments is not None
                else (EnvironmentSelection(id="local", cwd=self.cwd),)
            ),
            reasoning_effort=self.config.model_reasoning_effort,
            reasoning_summary=self.config.model_reasoning_summary,
            output_schema=output_schema or self.output_schema,
        )


class SessionServices(msgspec.Struct, frozen=True):
    """The collaborators of a session (the client's owner closes it, not the session)."""

    client: ModelClient
    tools: Sequence[RegisteredTool]
    capture: CaptureSettings
    """The session adds its hooks, approvals and warnings to these."""
    rules: RuleSet
    retry: RetryPolicy
    approval_callback: ApprovalCallback | None = None
    elicitation_callback: ElicitationHandler | None = None
    """Answers MCP servers' elicitation requests; None declines them (``mcp/elicitation.py``)."""
    environments: ThreadEnvironments | None = None
    """The session's execution environments (issue 26), started by the session as it opens;
    None: the classic single local environment."""
    mcp_factory: ClientFactory | None = None
    on_event: Callable[[SessionEvent], None] | None = None
    on_request: Callable[[Prompt], None] | None = None
    skills: SkillsService | None = None
    """The session's skills catalog (None: skills are off)."""
    startup_warnings: Sequence[str] = ()
    """Told once the session is configured (plugins that did not load)."""
