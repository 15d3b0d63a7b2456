"""``SessionOptions`` → the runtime's ``SessionSettings`` + ``SessionServices``: the defaults and
the wiring of a session, in one place (the runtime holds none).

:class:`SessionOptions` is the low-level description of a session (what ``mini_codex.Session``
users and the tests fill in); :func:`assemble` fills in what was left out — the config's model,
sandbox and approval policy, the base instructions, the built-in tools (``shell``, or
``exec_command`` + ``write_stdin`` for the OpenAI Responses client), the command rules, the global
AGENTS.md, the provider's stream retries — and returns what ``Session.open`` takes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_codex.config import Config
from mini_codex.discovery.agents_md import AgentsMdConfig
from mini_codex.models.base import ModelClient, Prompt
from mini_codex.models.retry import RetryPolicy
from mini_codex.policy.rules import RuleSet
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback
from mini_codex.runtime.capture import CaptureProbe, CaptureSettings
from mini_codex.runtime.rule_files import load_rule_files
from mini_codex.runtime.session_settings import SessionServices, SessionSettings
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.skills.discovery import DEFAULT_ADMIN_ROOT, SkillRootsConfig
from mini_codex.skills.plugins import apply_plugins, load_plugins, plugin_skill_roots
from mini_codex.skills.service import SkillsService
from mini_codex.world_state import WorldStateExtension

if TYPE_CHECKING:  # the MCP SDK is imported only when MCP servers are configured (issue 13)
    from mini_codex.environments.config import EnvironmentsConfig
    from mini_codex.environments.manager import ThreadEnvironments
    from mini_codex.mcp.client import ClientFactory
    from mini_codex.mcp.elicitation import ElicitationHandler

__all__ = [
    "SessionOptions",
    "assemble",
    "default_base_instructions",
    "default_tools",
    "global_agents_md",
    "uses_unified_exec",
]


def default_base_instructions() -> str:
    return (files("mini_codex.runtime") / "prompts" / "base_instructions.md").read_text("utf-8")


def default_tools(
    config: Config, *, freeform_apply_patch: bool = False, unified_exec: bool = False
) -> list[RegisteredTool]:
    """The built-in tools; ``unified_exec`` gives ``exec_command`` + ``write_stdin`` instead of
    ``shell`` (see ``uses_unified_exec``)."""
    from mini_codex.tools.apply_patch import ApplyPatchTool
    from mini_codex.tools.shell import ShellTool
    from mini_codex.tools.unified_exec import unified_exec_tools
    from mini_codex.tools.update_plan import UpdatePlanTool
    from mini_codex.tools.view_image import ViewImageTool

    if unified_exec:
        exec_command, write_stdin = unified_exec_tools(config.tools.unified_exec_max_sessions)
        command_tools = [RegisteredTool(exec_command), RegisteredTool(write_stdin)]
    else:
        command_tools = [RegisteredTool(ShellTool(default_timeout_ms=config.shell_timeout_ms))]
    return [
        *command_tools,
        RegisteredTool(ApplyPatchTool(freeform=freeform_apply_patch)),
        RegisteredTool(UpdatePlanTool()),
        RegisteredTool(ViewImageTool()),
    ]


def uses_unified_exec(config: Config, client: ModelClient) -> bool:
    """``tools.unified_exec``, else on for the OpenAI Responses client only (Codex 0.169)."""
    if config.tools.unified_exec is not None:
        return config.tools.unified_exec
    module = sys.modules.get("mini_codex.models.openai_responses")  # loaded iff such a client
    return module is not None and isinstance(client, module.OpenAIResponsesClient)


def global_agents_md(home: Path) -> str | None:
    """``$MINI_CODEX_HOME/AGENTS.override.md``, else ``AGENTS.md`` (Codex's ``~/.codex`` files):
    read once per session; blank or unreadable files count as absent."""
    for name in ("AGENTS.override.md", "AGENTS.md"):
        try:
            text = (home / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if text.strip():
            return text.strip()
    return None


def _local_now() -> datetime:
    return datetime.now().astimezone()


@dataclass
class SessionOptions:
    """Everything a session needs; front ends fill it through ``host.open_session``."""

    cwd: Path
    home: Path
    client: ModelClient
    config: Config = field(default_factory=Config)
    model: str | None = None
    """Model slug; defaults to ``config.model``."""
    sandbox: SandboxPolicy | None = None
    """Defaults to the config's ``sandbox_mode``."""
    approval_policy: ApprovalPolicy | None = None
    base_instructions: str | None = None
    shell: str = "/bin/bash"
    env: Mapping[str, str] = field(default_factory=dict)
    """The environment of tool child processes (``host`` applies the config's policy)."""
    timezone: str = "Etc/UTC"
    clock: Callable[[], datetime] = _local_now
    resume_path: Path | None = None
    persist: bool = True
    """Write a rollout under ``home``; False keeps the session in memory only."""
    on_event: Callable[[SessionEvent], None] | None = None
    on_request: Callable[[Prompt], None] | None = None
    tools: Sequence[RegisteredTool] | None = None
    extensions: Sequence[WorldStateExtension] = ()
    capture_probe: CaptureProbe | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    """The process environment, read only for variables the config names (MCP
    ``bearer_token_env_var`` and ``env_vars``)."""
    mcp_factory: ClientFactory | None = None
    """Opens MCP clients (tests pass in-process servers); default: stdio / streamable HTTP."""
    output_schema: dict[str, Any] | None = None
    """A JSON Schema every turn's final message must match (``exec --output-schema``)."""
    approval_callback: ApprovalCallback | None = None
    """Answers approval requests (the terminal, a UI, a test); None denies every request."""
    elicitation_callback: ElicitationHandler | None = None
    """Answers MCP servers' elicitation requests; None declines them (``mcp/elicitation.py``)."""
    environments: EnvironmentsConfig | None = None
    """Execution environments (issue 26: ``environments.toml`` / ``MINI_CODEX_EXEC_SERVER_URL``,
    read by ``cli/``); None or local-only: the classic single local environment."""
    rules: RuleSet | None = None
    """Command rules; None loads ``$home/rules/*.rules`` and ``<cwd>/.mini-codex/rules/*.rules``."""
    user_home: Path | None = None
    """The user's home directory (``~/.agents/skills`` is a skills root); None: not searched."""
    admin_skills_root: Path | None = Path(DEFAULT_ADMIN_ROOT)
    """The admin skills root (Codex's ``/etc/codex/skills``); None: not searched."""
    agent_depth: int = 0
    """How deep this session is in a tree of agents (0: a root; ``host/agents``)."""
    thread_id: str | None = None
    """A new session's thread id (a spawned agent's); None: a fresh one."""
    session_meta_extra: Mapping[str, Any] | None = None
    """Further ``session_meta`` fields (a spawned agent's source)."""


def _sandbox_from_config(config: Config) -> SandboxPolicy:
    from mini_codex.host.spec import sandbox_policy

    policy = sandbox_policy(config.sandbox_mode, config)
    assert policy is not None  # sandbox_mode is always one of the three modes
    return policy


def _stream_retries(config: Config) -> int:
    provider = config.model_providers.get(config.model_provider)
    return provider.stream_max_retries if provider is not None else 5


def _skills(options: SessionOptions, config: Config, plugins: Any) -> SkillsService | None:
    """The session's skills catalog (its roots: home, user home, admin root, plugins)."""
    if not config.skills.enabled:
        return None
    return SkillsService(
        SkillRootsConfig(
            home=options.home,
            user_home=options.user_home,
            admin_root=options.admin_skills_root,
            project_root_markers=tuple(config.project_root_markers),
            plugin_roots=plugin_skill_roots(plugins),
        )
    )


def _environments(options: SessionOptions, cwd: Path) -> ThreadEnvironments | None:
    """The session's environments manager (issue 26); None for none or only the local one."""
    config = options.environments
    if config is None or config.is_local_only:
        return None
    from mini_codex.environments.manager import ThreadEnvironments

    return ThreadEnvironments(
        config,
        cwd=str(cwd),
        local_shell=os.path.basename(options.shell) or None,
        spawn_env=options.environ,
    )


def assemble(options: SessionOptions) -> tuple[SessionSettings, SessionServices]:
    """The settings and services of the session ``options`` describe (see the module docs);
    the config's plugins are loaded and applied (their hooks and skills join the session)."""
    config = options.config
    plugins, warnings = load_plugins(config.plugins)
    applied, clashes = apply_plugins(config, plugins)
    cwd = options.cwd.resolve()
    settings = SessionSettings(
        cwd=cwd,
        home=options.home,
        config=applied,
        model=options.model or config.model,
        sandbox=options.sandbox or _sandbox_from_config(config),
        approval_policy=options.approval_policy or config.approval_policy,
        base_instructions=options.base_instructions or default_base_instructions(),
        shell=options.shell,
        env=options.env,
        timezone=options.timezone,
        clock=options.clock,
        resume_path=options.resume_path,
        persist=options.persist,
        output_schema=options.output_schema,
        environ=options.environ,
        thread_id=options.thread_id,
        session_meta_extra=options.session_meta_extra,
    )
    tools = (
        options.tools
        if options.tools is not None
        else default_tools(config, unified_exec=uses_unified_exec(config, options.client))
    )
    capture = CaptureSettings(
        agents_md_config=AgentsMdConfig(
            max_bytes=config.project_doc_max_bytes,
            root_markers=tuple(config.project_root_markers),
        ),
        tools=tools,
        extensions=options.extensions,
        persist_cap=config.workspace.persist_cap,
        render_cap=config.workspace.render_cap,
        probe=options.capture_probe,
        user_instructions=global_agents_md(options.home),
    )
    services = SessionServices(
        client=options.client,
        tools=tools,
        capture=capture,
        rules=options.rules if options.rules is not None else load_rule_files(options.home, cwd),
        retry=RetryPolicy(max_retries=_stream_retries(config)),
        approval_callback=options.approval_callback,
        elicitation_callback=options.elicitation_callback,
        environments=_environments(options, cwd),
        mcp_factory=options.mcp_factory,
        on_event=options.on_event,
        on_request=options.on_request,
        skills=_skills(options, applied, plugins),
        startup_warnings=(*warnings, *clashes),
    )
    return settings, services
