"""The three frozen contexts: Session ⊃ Turn ⊃ Step (DESIGN §3, spec/codex-runtime.md §1–§2).

* ``SessionContext``: what is fixed for the session (id, home, config, shell, the rollout path).
* ``TurnContext``: what must not change while a turn runs (model, policies, cwd, date/timezone, the
  environment selections). Built once per user turn; settings changes build a new one.
* ``StepContext``: what may change between model requests, captured once per request by
  ``capture.capture_step`` and published only when complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from mini_codex.config import Config
from mini_codex.protocol import TurnContextItem
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy

if TYPE_CHECKING:
    from mini_codex.discovery.agents_md import LoadedAgentsMd
    from mini_codex.environments.manager import EnvironmentSnapshot
    from mini_codex.mcp.binding import McpBinding
    from mini_codex.runtime.tool_router import ToolRouter
    from mini_codex.sandbox.bwrap import SandboxAvailability
    from mini_codex.skills.executor import ExecutorSkill
    from mini_codex.skills.service import StepSkills
    from mini_codex.tools.approvals import Approvals
    from mini_codex.world_state.sections.environments import Environment
    from mini_codex.world_state.workspace_files import WorkspaceFiles


class SessionContext(msgspec.Struct, frozen=True):
    session_id: str
    home: Path
    config: Config
    shell: str = "/bin/bash"
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    """Environment passed to tool child processes (chosen by the CLI)."""
    approvals: Approvals | None = None
    """Asks the user and records safety decisions (``runtime.approvals.SessionApprovals``)."""
    never_writable: tuple[Path, ...] = ()
    """Never writable from the sandbox (``$MINI_CODEX_HOME``)."""


class EnvironmentSelection(msgspec.Struct, frozen=True):
    id: str
    cwd: Path


class TurnContext(msgspec.Struct, frozen=True):
    session: SessionContext
    turn_id: str
    model: str
    base_instructions: str
    approval_policy: ApprovalPolicy
    sandbox: SandboxPolicy
    cwd: Path
    current_date: str
    timezone: str
    environments: tuple[EnvironmentSelection, ...]
    reasoning_effort: str | None = None
    reasoning_summary: str | None = None
    output_schema: dict[str, Any] | None = None
    """The JSON Schema the turn's final message must match (``--output-schema``), if any."""

    def to_turn_context_item(self) -> TurnContextItem:
        """The persisted settings baseline of this turn (spec/codex-runtime.md §1.5)."""
        return TurnContextItem(
            turn_id=self.turn_id,
            cwd=str(self.cwd),
            current_date=self.current_date,
            timezone=self.timezone,
            approval_policy=self.approval_policy,
            sandbox_policy=self.sandbox.to_turn_context_json(),
            model=self.model,
            effort=self.reasoning_effort,
            summary=self.reasoning_summary or "auto",
        )


@dataclass(frozen=True)
class StepContext:
    turn: TurnContext
    step_id: str
    sequence: int
    environments: tuple[Environment, ...]
    agents_md: LoadedAgentsMd | None
    """None when AGENTS.md could not be loaded within the capture deadline (see ``notes``)."""
    workspace: WorkspaceFiles | None
    """None when the workspace could not be listed within the capture deadline."""
    sandbox: SandboxAvailability
    router: ToolRouter
    mcp: McpBinding | None = None
    """The exact MCP connections, config and catalog this step advertises and calls."""
    approved_prefixes: tuple[tuple[str, ...], ...] = ()
    """Commands approved for the session when the step was captured (``permissions``)."""
    notes: tuple[str, ...] = ()
    """What the capture skipped or could not finish, told to the model (``capture_notes``)."""
    environment_snapshot: EnvironmentSnapshot | None = None
    """The readiness of the turn's selected environments at capture (issue 26); None: the
    classic single local environment."""
    skills: StepSkills | None = None
    """The turn's skills (catalog, ``host_skills`` section); None when skills are off."""
    subagents: str | None = None
    """The open child agents, one ``- ID: NICKNAME`` line each (``environments`` section)."""
    executor_skills: tuple[ExecutorSkill, ...] | None = None
    """Skills of the ready remote environments (the executor ``skills`` section); None: the
    session has no remote environment."""
