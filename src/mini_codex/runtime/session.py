"""The Session: owns history, the rollout recorder, the step services and the event stream.

A session is opened with ``Session.open(options)`` (an async context manager owning a task group
and, when persisting, a rollout recorder). Input goes in with ``run_turn(text)`` (run a whole turn
in the caller's task, after the running one), ``submit(text)`` (start a turn in the background, or
steer the running one) and ``interrupt()``. Input steered too late for a turn is answered by a
follow-up turn (after an interrupt, it opens the next turn). Everything observable comes out as
``SessionEvent``s, to the ``on_event`` callback and to every ``subscribe()`` stream. A failed turn
becomes an ``error`` event and the session stays usable. ``resume_path`` continues a rollout:
history, world-state baseline, reference context and previous model are restored, so nothing is
re-injected when nothing changed.
"""

from __future__ import annotations

import math
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mini_codex._version import __version__
from mini_codex.config import Config
from mini_codex.context import ContextManager
from mini_codex.discovery.agents_md import AgentsMdCache, AgentsMdConfig
from mini_codex.discovery.workspace import WorkspaceScanner
from mini_codex.environments.config import EnvironmentsConfig
from mini_codex.errors import MiniCodexError
from mini_codex.mcp.errors import McpError
from mini_codex.models.base import ModelClient, Prompt
from mini_codex.models.retry import RetryPolicy
from mini_codex.models.tokens import estimate_context_tokens
from mini_codex.policy.rules import RuleSet
from mini_codex.protocol import Message, ResponseItem, SessionMeta, message_text, user_message
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import SessionConfigured, SessionEvent, WarningEvent
from mini_codex.rollout.paths import new_thread_id, rollout_path
from mini_codex.rollout.recorder import RecorderOptions, RolloutRecorder
from mini_codex.rollout.replay.checkpoint import PreviousTurnSettings, WindowInfo
from mini_codex.rollout.resume import last_token_info, load_resume_state
from mini_codex.runtime.approvals import ApprovalCallback, SessionApprovals
from mini_codex.runtime.capture import CaptureProbe, StepServices
from mini_codex.runtime.contexts import EnvironmentSelection, SessionContext, TurnContext
from mini_codex.runtime.hooks import Hooks
from mini_codex.runtime.recording import Recording
from mini_codex.runtime.rule_files import load_rule_files
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.runtime.turn import TokenTotals, TurnDeps, TurnState, run_compact_task, run_turn
from mini_codex.skills.discovery import DEFAULT_ADMIN_ROOT, SkillRootsConfig
from mini_codex.skills.model import SkillSelection
from mini_codex.skills.plugins import apply_plugins, load_plugins, plugin_skill_roots
from mini_codex.skills.service import SkillsService
from mini_codex.tools.apply_patch import ApplyPatchTool
from mini_codex.tools.shell import ShellTool
from mini_codex.tools.unified_exec import unified_exec_tools
from mini_codex.tools.update_plan import UpdatePlanTool
from mini_codex.tools.view_image import ViewImageTool
from mini_codex.world_state import WorldStateExtension, WorldStateSnapshot

if TYPE_CHECKING:  # the MCP SDK is imported only when MCP servers are configured (issue 13)
    from mini_codex.mcp.client import ClientFactory
    from mini_codex.mcp.elicitation import ElicitationHandler
    from mini_codex.mcp.runtime import McpRuntime


class NoActiveTurnError(MiniCodexError):
    """Steering input was given while no turn is running."""


class ExpectedTurnMismatchError(MiniCodexError):
    """Steering named a turn that is not the running one."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(f"expected turn {expected} but turn {actual} is running")
        self.expected = expected
        self.actual = actual


class EmptyInputError(MiniCodexError):
    """Steering input was empty."""


def default_base_instructions() -> str:
    return (files("mini_codex.runtime") / "prompts" / "base_instructions.md").read_text("utf-8")


def default_tools(
    config: Config, *, freeform_apply_patch: bool = False, unified_exec: bool = False
) -> list[RegisteredTool]:
    """The built-in tools; ``unified_exec`` gives ``exec_command`` + ``write_stdin`` instead of
    ``shell`` (see ``uses_unified_exec``)."""
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
    """Everything a session needs; ``cli/`` builds it from argv, env and config files."""

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
    """The environment of tool child processes (``cli/`` picks an allow-list)."""
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
    ``bearer_token_env_var`` and ``env_vars``); ``cli/`` passes ``os.environ``."""
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


def _sandbox_from_config(config: Config) -> SandboxPolicy:
    match config.sandbox_mode:
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


class Session:
    def __init__(self, options: SessionOptions, task_group: TaskGroup) -> None:
        self.options = options
        plugins, self._startup_warnings = load_plugins(options.config.plugins)
        self.config, clashes = apply_plugins(options.config, plugins)
        self._startup_warnings += clashes
        self.model = options.model or options.config.model
        self.sandbox = options.sandbox or _sandbox_from_config(options.config)
        self.approval_policy: ApprovalPolicy = (
            options.approval_policy or options.config.approval_policy
        )
        self.base_instructions = options.base_instructions or default_base_instructions()
        self.cwd = options.cwd.resolve()
        self._tg = task_group
        self._subscribers: list[MemoryObjectSendStream[SessionEvent]] = []
        self.history = ContextManager()
        self.recorder: RolloutRecorder | None = None
        self.rollout_path: Path | None = None
        self.session_id = ""
        self.recording = Recording(self.history, None, self._emit)
        self.recording.tool_output_token_limit = options.config.tool_output_token_limit
        self.recording.model = self.model
        self.state = TurnState(self.recording, checkpoint=self._maybe_checkpoint)
        tools = (
            options.tools
            if options.tools is not None
            else default_tools(
                options.config, unified_exec=uses_unified_exec(options.config, options.client)
            )
        )
        self._closeable_tools = [entry.tool for entry in tools if hasattr(entry.tool, "aclose")]
        self.hooks = Hooks(
            self.config.hooks,
            options.config.notify,
            cwd=self.cwd,
            env=options.env,
            shell=options.shell,
            session_id=lambda: self.session_id,
            on_warning=lambda message: self._emit(WarningEvent(message=message)),
        )
        self.services = StepServices(
            scanner=WorkspaceScanner(self.cwd),
            agents_md=AgentsMdCache(),
            agents_md_config=AgentsMdConfig(
                max_bytes=options.config.project_doc_max_bytes,
                root_markers=tuple(options.config.project_root_markers),
            ),
            tools=tools,
            extensions=options.extensions,
            persist_cap=options.config.workspace.persist_cap,
            render_cap=options.config.workspace.render_cap,
            probe=options.capture_probe,
            on_warning=lambda message: self._emit(WarningEvent(message=message)),
            user_instructions=global_agents_md(options.home),
            wrap_tool=self.hooks.wrap if self.hooks.wraps_tools else None,
        )
        if self.config.skills.enabled:
            self.services.skills = SkillsService(
                SkillRootsConfig(
                    home=options.home,
                    user_home=options.user_home,
                    admin_root=options.admin_skills_root,
                    project_root_markers=tuple(self.config.project_root_markers),
                    plugin_roots=plugin_skill_roots(plugins),
                )
            )
        self.approvals = SessionApprovals(
            self.recording,
            rules=options.rules
            if options.rules is not None
            else load_rule_files(options.home, self.cwd),
            callback=options.approval_callback,
            on_abort=self.interrupt,
        )
        self.services.approvals = self.approvals
        self.mcp: McpRuntime | None = None
        self._retry = RetryPolicy(
            max_retries=self._provider_stream_retries(),
        )
        self._active: anyio.CancelScope | None = None
        self._active_turn_id = ""
        self._turn_done: anyio.Event | None = None
        self._closing = False
        self._environments_scope: anyio.CancelScope | None = None
        self._restored_selections: list[str] | None = None

    def _provider_stream_retries(self) -> int:
        provider = self.config.model_providers.get(self.config.model_provider)
        return provider.stream_max_retries if provider is not None else 5

    # --- lifecycle ---------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(cls, options: SessionOptions) -> AsyncIterator[Session]:
        try:
            async with anyio.create_task_group() as task_group:
                session = cls(options, task_group)
                await session._start()
                try:
                    yield session
                finally:
                    with anyio.CancelScope(shield=True):
                        await session._shutdown()
        except BaseExceptionGroup as group:
            # One library error (a required MCP server that cannot start, a locked rollout)
            # is raised as itself, not wrapped by the task group, so callers can report it.
            if len(group.exceptions) == 1 and isinstance(group.exceptions[0], MiniCodexError):
                raise group.exceptions[0] from None
            raise

    async def _start_mcp(self) -> None:
        """Start the configured MCP servers in the background; fail fast on ``required`` ones."""
        servers = {name: c for name, c in self.config.mcp_servers.items() if c.enabled}
        if not servers:
            return
        from mini_codex.mcp.cache import CACHE_DIR_NAME, CatalogCache
        from mini_codex.mcp.client import StdioHttpClientFactory
        from mini_codex.mcp.runtime import McpRuntime

        runtime = McpRuntime(
            servers,
            factory=self.options.mcp_factory
            or StdioHttpClientFactory(
                self.options.environ,
                home=self.options.home,
                elicitation=self.options.elicitation_callback,
                on_warning=lambda message: self._emit(WarningEvent(message=message)),
            ),
            cache=CatalogCache(self.options.home / CACHE_DIR_NAME),
            grace_s=self.config.mcp_optional_startup_grace_ms / 1000,
        )
        await self._tg.start(runtime.run)
        self.mcp = self.services.mcp = runtime
        try:
            await runtime.wait_for_required()
        except McpError:
            with anyio.CancelScope(shield=True):
                await runtime.aclose()
            raise

    async def _start_environments(self) -> None:
        """Environments hook (issue 26): connect the configured executors in the background."""
        config = self.options.environments
        if config is None or config.is_local_only:
            return
        from mini_codex.environments.manager import ThreadEnvironments

        manager = ThreadEnvironments(
            config,
            cwd=str(self.cwd),
            local_shell=os.path.basename(self.options.shell) or None,
            spawn_env=self.options.environ,
        )
        scope = anyio.CancelScope()
        self._environments_scope = scope

        async def run() -> None:
            with scope:
                async with manager:
                    await anyio.sleep_forever()

        self._tg.start_soon(run)
        self.services.environments = manager

    async def _start(self) -> None:
        options = self.options
        await self._start_environments()
        await self._start_mcp()
        recorder_options = RecorderOptions(
            fsync_at_turn_end=self.config.rollout.fsync_at_turn_end,
            fsync_on_shutdown=self.config.rollout.fsync_on_shutdown,
            checkpoint_every_items=self.config.rollout.checkpoint_every_items,
            checkpoint_every_bytes=self.config.rollout.checkpoint_every_bytes,
            checkpoint_min_ratio=self.config.rollout.checkpoint_min_ratio,
        )
        resumed = options.resume_path is not None
        if options.resume_path is not None:
            self._restore(options.resume_path)
            self.rollout_path = options.resume_path
            self.recorder = RolloutRecorder(options.resume_path, options=recorder_options)
        else:
            now = options.clock()
            self.session_id = new_thread_id(int(now.timestamp() * 1000), os.urandom(10))
            if options.persist:
                self.rollout_path = rollout_path(options.home, now, self.session_id)
                meta = SessionMeta(
                    id=self.session_id,
                    session_id=self.session_id,
                    timestamp=now.isoformat(),
                    cwd=str(self.cwd),
                    originator="mini_codex",
                    cli_version=__version__,
                    model_provider=self.config.model_provider,
                    environments=self._recorded_selections(),
                )
                self.recorder = RolloutRecorder(
                    self.rollout_path, session_meta=meta, options=recorder_options
                )
        if self.recorder is not None:
            await self.recorder.start(self._tg)
        self.recording.recorder = self.recorder
        self._emit(
            SessionConfigured(
                session_id=self.session_id,
                model=self.model,
                cwd=str(self.cwd),
                rollout_path=str(self.rollout_path) if self.rollout_path else None,
                resumed=resumed,
            )
        )
        for warning in self._startup_warnings:  # plugins that did not load
            self._emit(WarningEvent(message=warning))
        await self.hooks.session_start("resume" if resumed else "startup")

    def _restore(self, path: Path) -> None:
        state = load_resume_state(path)
        meta = state.session_meta
        self.session_id = meta.thread_id if meta is not None else path.stem
        self.history.replace(state.history)
        if state.world_state is not None:
            self.history.set_world_state_baseline(WorldStateSnapshot.from_json(state.world_state))
            if "host_skills" in state.world_state and self.services.skills is not None:
                self.services.skills.mark_listed()
            # Commands approved for the session stay approved when it is resumed.
            permissions = state.world_state.get("permissions")
            saved = (
                permissions.get("approved_command_prefixes")
                if isinstance(permissions, dict)
                else None
            )
            for prefix in saved if isinstance(saved, list) else []:
                if isinstance(prefix, list):
                    self.approvals.approve_prefix([str(word) for word in prefix])
        if meta is not None and meta.environments is not None:  # issue 26: restore selections
            self._restored_selections = [
                str(selection.get("environment_id")) for selection in meta.environments
            ]
        self.state.reference_context = state.reference_context
        settings = state.previous_turn_settings
        self.state.previous_model = settings.model if settings is not None else None
        self.state.window = state.window
        self._restore_tokens(path)

    def _restore_tokens(self, path: Path) -> None:
        """Token totals and the active context tokens survive a resume (the newest
        ``token_count``; the context is estimated from the history when none says it)."""
        info = last_token_info(path)
        totals = info.get("total_token_usage") if info is not None else None
        if isinstance(totals, dict):
            for key in TokenTotals.__dataclass_fields__:
                value = totals.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    setattr(self.state.session_tokens, key, value)
        active = info.get("context_tokens") if info is not None else None
        last = info.get("last_token_usage") if info is not None else None
        if not isinstance(active, int) and isinstance(last, dict):
            active = last.get("total_tokens")
        if isinstance(active, int) and not isinstance(active, bool):
            self.state.context_tokens = active
        else:
            self.state.context_tokens = estimate_context_tokens(
                self.base_instructions, (), self.history.for_prompt(), self.model
            )

    @property
    def window(self) -> WindowInfo:
        """The context window the session is in (advanced by every compaction)."""
        return self.state.window

    @property
    def context_tokens(self) -> int:
        """Active context tokens (spec §8.1)."""
        return self.state.context_tokens

    async def _shutdown(self) -> None:
        self._closing = True
        if self._active is not None:
            self._active.cancel()
        if self._turn_done is not None:
            await self._turn_done.wait()
        for tool in self._closeable_tools:  # unified exec: kill every live PTY session
            await tool.aclose()
        if self.recorder is not None:
            await self.recorder.aclose()
        if self.mcp is not None:
            await self.mcp.aclose()
        if self._environments_scope is not None:
            self._environments_scope.cancel()
        for stream in self._subscribers:
            stream.close()

    # --- events ------------------------------------------------------------------------------

    def subscribe(self) -> MemoryObjectReceiveStream[SessionEvent]:
        """A stream of every event from now on (unbounded buffer: read it)."""
        send, receive = anyio.create_memory_object_stream[SessionEvent](math.inf)
        self._subscribers.append(send)
        return receive

    def _emit(self, event: SessionEvent) -> None:
        if self.options.on_event is not None:
            self.options.on_event(event)
        for stream in self._subscribers:
            try:
                stream.send_nowait(event)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    # --- turns -------------------------------------------------------------------------------

    @property
    def turn_active(self) -> bool:
        return self._active is not None

    def new_turn_context(
        self, turn_id: str | None = None, output_schema: dict[str, Any] | None = None
    ) -> TurnContext:
        now = self.options.clock()
        session_ctx = SessionContext(
            session_id=self.session_id,
            home=self.options.home,
            config=self.config,
            shell=self.options.shell,
            env=self.options.env,
            approvals=self.approvals,
            never_writable=(self.options.home,),
        )
        return TurnContext(
            session=session_ctx,
            turn_id=turn_id or str(uuid.uuid4()),
            model=self.model,
            base_instructions=self.base_instructions,
            approval_policy=self.approval_policy,
            sandbox=self.sandbox,
            cwd=self.cwd,
            current_date=now.strftime("%Y-%m-%d"),
            timezone=self.options.timezone,
            environments=self._environment_selections(),
            reasoning_effort=self.config.model_reasoning_effort,
            reasoning_summary=self.config.model_reasoning_summary,
            output_schema=output_schema or self.options.output_schema,
        )

    def _environment_selections(self) -> tuple[EnvironmentSelection, ...]:
        """The turn's selections (issue 26): a resumed session's recorded ones (ids no longer
        configured are skipped with a warning), else the configured default order."""
        manager = self.services.environments
        configured = manager.selection_ids() if manager is not None else ["local"]
        ids = configured
        if self._restored_selections is not None:
            ids = [i for i in self._restored_selections if i in configured]
            for missing in [i for i in self._restored_selections if i not in configured]:
                self._emit(
                    WarningEvent(
                        message=f"environment `{missing}` of the resumed "
                        "session is not configured here; it is skipped"
                    )
                )
            self._restored_selections = ids
        return tuple(EnvironmentSelection(id=i, cwd=self.cwd) for i in ids)

    def _recorded_selections(self) -> list[dict[str, str]] | None:
        manager = self.services.environments
        if manager is None:
            return None
        return [{"environment_id": i, "cwd": str(self.cwd)} for i in manager.selection_ids()]

    async def run_turn(
        self,
        text: str | Sequence[ResponseItem],
        *,
        output_schema: dict[str, Any] | None = None,
        skills: Sequence[SkillSelection] = (),
    ) -> str | None:
        """Run one user turn to completion; returns the last agent message.

        Turns run one at a time: while another turn runs (or is finishing), this waits for it.
        ``output_schema`` (a JSON Schema) is sent with this turn's requests; ``skills`` are
        structured skill inputs (their ``SKILL.md`` is injected after the input).
        """
        while self._turn_done is not None and self._active is not None:
            await self._turn_done.wait()
        if self._closing:
            raise MiniCodexError("the session is shutting down")
        claimed = self._claim_turn(text)
        return await self._run_turn(*claimed, output_schema=output_schema, skills=skills)

    def _claim_turn(
        self, text: str | Sequence[ResponseItem]
    ) -> tuple[anyio.CancelScope, list[ResponseItem], str]:
        """Mark a turn active now, before its task runs, so submit/steer/interrupt see it.

        Input steered too late for the previous turn (after its last request, or before it was
        interrupted) is kept: it opens this turn, before the new input.
        """
        items = self.state.take_pending()
        items.extend([user_message(text)] if isinstance(text, str) else text)
        scope = anyio.CancelScope()
        self._active = scope
        self._active_turn_id = str(uuid.uuid4())
        self._turn_done = anyio.Event()
        return scope, items, self._active_turn_id

    async def _run_turn(
        self,
        scope: anyio.CancelScope,
        items: list[ResponseItem],
        turn_id: str,
        output_schema: dict[str, Any] | None = None,
        skills: Sequence[SkillSelection] = (),
    ) -> str | None:
        done = self._turn_done
        assert done is not None
        interrupted = True
        try:
            turn = self.new_turn_context(turn_id, output_schema)
            deps = self._deps()
            with scope:
                result = await run_turn(self.state, turn, items, deps, skills=skills)
                interrupted = False
                texts = [message_text(i) for i in items if isinstance(i, Message)]
                await self.hooks.turn_ended(turn_id, texts, result, self._tg)
                return result
            return None  # interrupted
        finally:
            self._active = None
            done.set()
            if self.state.pending_input and not interrupted and not self._closing:
                # Input steered after the turn's last request is answered by a follow-up turn
                # (after an interrupt it waits for the next turn instead).
                self._tg.start_soon(self._run_turn, *self._claim_turn([]))

    def _deps(self) -> TurnDeps:
        return TurnDeps(
            services=self.services,
            client=self.options.client,
            retry=self._retry,
            on_request=self.options.on_request,
        )

    async def compact(self) -> str | None:
        """Compact the history now (Codex ``Op::Compact``; the TUI's ``/compact``).

        Runs as a task of its own after the running turn (``task_started``, the summarizer's
        answer, ``compacted``, ``task_complete``); ``interrupt()`` cancels it, leaving history
        as it was. The initial context is not re-injected: the next turn records it in full
        (spec §8.4). Emits ``context_compacted`` and the long-threads warning; returns the
        summary, or None when the compaction failed (an ``error`` event says why).
        """
        while self._turn_done is not None and self._active is not None:
            await self._turn_done.wait()
        if self._closing:
            raise MiniCodexError("the session is shutting down")
        scope = anyio.CancelScope()
        done = anyio.Event()
        self._active, self._active_turn_id, self._turn_done = scope, str(uuid.uuid4()), done
        try:
            with scope:
                turn = self.new_turn_context(self._active_turn_id)
                return await run_compact_task(self.state, turn, self._deps())
            return None  # interrupted
        finally:
            self._active = None
            done.set()

    def submit(self, text: str | Sequence[ResponseItem]) -> None:
        """Start a turn in the background, or steer the running turn with ``text`` (a message, or
        input items such as a message with images)."""
        if self._active is not None:
            if isinstance(text, str):
                self.steer(text)
            else:
                self.state.pending_input.extend(text)
        else:
            self._tg.start_soon(self._run_turn, *self._claim_turn(text))

    def steer(self, text: str, *, expected_turn_id: str | None = None) -> str:
        """Add ``text`` to the running turn's pending input; returns that turn's id.

        Refused (spec/codex-runtime.md §10 case 13) with ``NoActiveTurnError`` when no turn runs,
        ``ExpectedTurnMismatchError`` when ``expected_turn_id`` names another turn, and
        ``EmptyInputError`` for blank input.
        """
        if self._active is None:
            raise NoActiveTurnError("no active turn to steer")
        actual = self._active_turn_id
        if expected_turn_id is not None and expected_turn_id != actual:
            raise ExpectedTurnMismatchError(expected_turn_id, actual)
        if not text.strip():
            raise EmptyInputError("steering input is empty")
        self.state.pending_input.append(user_message(text))
        return actual

    def skill_names(self) -> list[str]:
        """Names of the skills of the latest turn (what ``$`` completes to in the UI)."""
        skills = self.services.skills
        return list(dict.fromkeys(skills.names(self.cwd))) if skills is not None else []

    def interrupt(self) -> None:
        if self._active is not None:
            self._active.cancel()

    # --- checkpoints -------------------------------------------------------------------------

    async def _maybe_checkpoint(self) -> None:
        recorder = self.recorder
        if recorder is None or not recorder.checkpoint_due():
            return
        baseline = self.history.world_state_baseline
        settings = (
            PreviousTurnSettings(
                model=self.state.previous_model, comp_hash=None, realtime_active=None
            )
            if self.state.previous_model is not None
            else None
        )
        await recorder.write_checkpoint(
            self.history.items,
            baseline.to_json() if baseline is not None else None,
            self.state.reference_context,
            settings,
            self.state.window,
        )
