"""Step capture: one function, a fixed order, published only when complete (codex-runtime §2.2).

Order: environments (readiness refresh) → AGENTS.md → capability roots / sandbox → workspace file
set (ours) → MCP binding (``McpRuntime.binding_for_step``: refresh if dirty, wait for required and
``mcp://``-mentioned servers, the shared grace for optional ones; empty when no runtime) →
ToolRouter (core tools + the binding's MCP tools). The AGENTS.md and workspace phases run in a
thread with a deadline (``deadline.py``): when one is late the step goes on with the previous
value (or without the section) and a note for the model (the ``capture_notes`` section), which
also lists what discovery skipped (a FIFO AGENTS.md, an oversized ignore file, ...).
Every await is a cancellation point; a cancelled capture or a tool collision publishes nothing
(the exception propagates and no ``StepContext`` exists).
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING, NamedTuple

import anyio
import msgspec

from mini_codex.discovery.agents_md import AgentsMdCache, AgentsMdConfig, LoadedAgentsMd
from mini_codex.discovery.safe_read import display_path
from mini_codex.discovery.workspace import WorkspaceScanner
from mini_codex.mcp.binding import McpBinding
from mini_codex.runtime.approvals import SessionApprovals
from mini_codex.runtime.contexts import StepContext, TurnContext
from mini_codex.runtime.deadline import DeadlineCall, Late
from mini_codex.runtime.environment_discovery import (
    EnvironmentCaches,
    has_remote,
    primary_workspace,
    remote_agents_md_and_skills,
)
from mini_codex.runtime.environments_step import route_tools, step_snapshot, world_environments
from mini_codex.runtime.extension_inputs import extension_context
from mini_codex.runtime.mcp_tools import mcp_registered_tools
from mini_codex.runtime.tool_router import RegisteredTool, ToolRouter
from mini_codex.sandbox.bwrap import SandboxAvailability
from mini_codex.sandbox.launch import detect_sandbox
from mini_codex.sandbox.policy import writable_roots
from mini_codex.skills.capture import capture_skills
from mini_codex.skills.executor import render_executor_skills
from mini_codex.skills.executor_section import ExecutorSkillsSection
from mini_codex.world_state import WorldState, WorldStateExtension
from mini_codex.world_state.extensions import ExtensionStores, contribute_sections
from mini_codex.world_state.sections import (
    AgentsMdSection,
    EnvironmentsSection,
    ModelSection,
    PermissionsSection,
    ToolsSection,
)
from mini_codex.world_state.sections.capture_notes import CaptureNotesSection
from mini_codex.world_state.sections.environments import Environment
from mini_codex.world_state.sections.environments_instructions import (
    EnvironmentsInstructionsSection as EnvironmentsInstructions,
)
from mini_codex.world_state.sections.permissions import landlock_note, unsandboxed_note
from mini_codex.world_state.sections.workspace import WorkspaceSection
from mini_codex.world_state.workspace_files import WorkspaceFiles

if TYPE_CHECKING:  # the MCP runtime (and its SDK) is loaded only when servers are configured
    from mini_codex.environments.manager import EnvironmentSnapshot, ThreadEnvironments
    from mini_codex.mcp.runtime import McpRuntime
    from mini_codex.skills.service import SkillsService, StepSkills

CaptureProbe = Callable[[str], Awaitable[None]]
"""Called with the phase name before each await of a capture (tests use it to cancel there)."""

CAPTURE_PHASES = ("environments", "agents_md", "sandbox", "workspace", "mcp", "tools")

DEFAULT_AGENTS_MD_DEADLINE_S = 0.5
"""AGENTS.md normally loads in well under a millisecond (a stat-validated cache)."""
DEFAULT_WORKSPACE_DEADLINE_S = 1.25
"""A first full scan of a 100k-file workspace takes ~0.5-0.7 s on a busy 2-core machine; both
deadlines together stay under 2 s."""


class CaptureSettings(msgspec.Struct, frozen=True):
    """What a capture reads and never changes: built once per session."""

    agents_md_config: AgentsMdConfig
    tools: Sequence[RegisteredTool]
    extensions: Sequence[WorldStateExtension] = ()
    persist_cap: int = 2000
    render_cap: int = 100
    probe: CaptureProbe | None = None
    new_id: Callable[[], str] = msgspec.field(default=lambda: str(uuid.uuid4()))
    on_warning: Callable[[str], None] | None = None
    """Told about MCP servers omitted from a step (once per connection set)."""
    user_instructions: str | None = None
    """The global ``$MINI_CODEX_HOME/AGENTS.md`` text, placed before the project docs."""
    wrap_tool: Callable[[RegisteredTool], RegisteredTool] | None = None
    """Applied to every tool of a step (the session's ``PreToolUse``/``PostToolUse`` hooks)."""
    approvals: SessionApprovals | None = None
    """The session's approvals (their approved prefixes are captured into each step)."""
    agents_md_deadline_s: float = DEFAULT_AGENTS_MD_DEADLINE_S
    """How long the AGENTS.md phase may take before the step goes on without it (the model is
    told; the late work finishes in the background)."""
    workspace_deadline_s: float = DEFAULT_WORKSPACE_DEADLINE_S
    """The same for the workspace scan."""
    subagents: Callable[[], str | None] | None = None
    """The session's open child agents as ``environments`` lines (``host/agents``)."""


class CaptureCaches(msgspec.Struct):
    """What captures keep across the steps of a session; only ``capture_step`` writes it."""

    scanner: WorkspaceScanner
    agents_md: AgentsMdCache = msgspec.field(default_factory=AgentsMdCache)
    sandbox: SandboxAvailability | None = None
    agents_md_call: DeadlineCall[LoadedAgentsMd] = msgspec.field(
        default_factory=lambda: DeadlineCall("agents-md")
    )
    workspace_call: DeadlineCall[WorkspaceFiles] = msgspec.field(
        default_factory=lambda: DeadlineCall("workspace")
    )
    last_agents_md: LoadedAgentsMd | None = None
    last_workspace: WorkspaceFiles | None = None
    environments: ThreadEnvironments | None = None
    """The session's environments (issue 26); None: the classic single local environment."""
    skills: SkillsService | None = None
    """The session's skills (None: no skills catalog); discovered once per turn."""
    extension_stores: ExtensionStores = msgspec.field(default_factory=ExtensionStores)
    """The session and thread stores extensions keep data in (the turn store is per turn)."""
    remote: EnvironmentCaches = msgspec.field(default_factory=EnvironmentCaches)
    """What was read in remote environments (AGENTS.md, the primary's workspace; issue 26)."""


async def _phase(settings: CaptureSettings, name: str) -> None:
    if settings.probe is not None:
        await settings.probe(name)
    await anyio.lowlevel.checkpoint()


class CapturedStep(NamedTuple):
    """A captured step and the WorldState built from it."""

    step: StepContext
    world_state: WorldState


async def capture_step(
    turn: TurnContext,
    settings: CaptureSettings,
    caches: CaptureCaches,
    sequence: int,
    *,
    mcp_runtime: McpRuntime | None = None,
    required_mcp_servers: Collection[str] = (),
    previous_model: str | None = None,
) -> CapturedStep:
    """Capture everything a model request may see: the complete, frozen step and its WorldState.

    ``mcp_runtime``: the session's MCP servers (None: every step gets an empty binding).
    ``required_mcp_servers``: servers named by ``mcp://NAME`` in the turn's input, waited for.
    ``previous_model``: the model of the previous turn (the ``model`` section tells a switch).
    """
    await _phase(settings, "environments")
    environments, snapshot = await _environments(turn, caches)
    notes: list[str] = []
    await _phase(settings, "agents_md")
    remote = snapshot if has_remote(snapshot) else None  # issues 26 / 27.6: remote environments
    agents_md: LoadedAgentsMd | None
    if remote is not None:  # every ready environment's AGENTS.md, and executor skills
        local_docs = functools.partial(caches.agents_md.get, turn.cwd, settings.agents_md_config)
        agents_md, remote_skills = await remote_agents_md_and_skills(
            remote, settings.agents_md_config, settings.user_instructions, local_docs,
            caches.remote, notes, settings.on_warning,
        )  # fmt: skip
    else:
        agents_md, remote_skills = await _agents_md(turn, settings, caches, notes), None
    skills = await _skills(turn, settings, caches)
    await _phase(settings, "sandbox")
    if caches.sandbox is None:
        caches.sandbox = await detect_sandbox()
    await _phase(settings, "workspace")
    workspace = await _workspace(settings, caches, notes)
    if remote is not None:  # the workspace of the primary environment
        workspace = await primary_workspace(remote, turn.turn_id, caches.remote, notes, workspace)
    await _phase(settings, "mcp")
    mcp = await _mcp_binding(settings, mcp_runtime, required_mcp_servers)
    await _phase(settings, "tools")
    registered = [*settings.tools, *mcp_registered_tools(mcp)]
    if snapshot is not None:  # environments hook (issue 26): route to the step's environments
        registered = route_tools(registered, snapshot)
    if settings.wrap_tool is not None:
        registered = [settings.wrap_tool(entry) for entry in registered]
    step = StepContext(
        turn=turn,
        step_id=settings.new_id(),
        sequence=sequence,
        environments=environments,
        agents_md=agents_md,
        workspace=workspace,
        sandbox=caches.sandbox,
        router=ToolRouter.build(registered),
        mcp=mcp,
        approved_prefixes=(
            tuple(settings.approvals.session_prefixes()) if settings.approvals is not None else ()
        ),
        notes=tuple(display_path(note) for note in notes),
        environment_snapshot=snapshot,
        skills=skills,
        subagents=settings.subagents() if settings.subagents is not None else None,
        executor_skills=remote_skills,
    )
    world_state = build_world_state(
        step,
        previous_model=previous_model,
        extensions=settings.extensions,
        stores=caches.extension_stores,
        persist_cap=settings.persist_cap,
        render_cap=settings.render_cap,
    )
    return CapturedStep(step, world_state)


async def _environments(
    turn: TurnContext, caches: CaptureCaches
) -> tuple[tuple[Environment, ...], EnvironmentSnapshot | None]:
    """The step's environments, and their readiness snapshot when the session has several
    (issue 26; the first step waits, bounded, for executors still connecting)."""
    if caches.environments is not None:
        await caches.environments.settle()
        snapshot = step_snapshot(turn, caches.environments)
        return world_environments(snapshot), snapshot
    shell_name = os.path.basename(turn.session.shell) or None
    return (
        tuple(
            Environment(
                id=selection.id,
                cwd=str(selection.cwd),
                shell=shell_name,
                is_primary=index == 0,
            )
            for index, selection in enumerate(turn.environments)
        ),
        None,
    )


async def _agents_md(
    turn: TurnContext, settings: CaptureSettings, caches: CaptureCaches, notes: list[str]
) -> LoadedAgentsMd | None:
    """This step's AGENTS.md, or the previous step's (with a note) when it is late."""
    loaded = await caches.agents_md_call.call(
        functools.partial(
            caches.agents_md.get,
            turn.cwd,
            settings.agents_md_config,
            user_instructions=settings.user_instructions,
        ),
        settings.agents_md_deadline_s,
    )
    if isinstance(loaded, Late):
        stale = caches.last_agents_md
        notes.append(
            _late_note("reading AGENTS.md", settings.agents_md_deadline_s, stale is not None)
        )
        return stale
    caches.last_agents_md = loaded
    notes.extend(loaded.warnings)
    return loaded


async def _skills(
    turn: TurnContext, settings: CaptureSettings, caches: CaptureCaches
) -> StepSkills | None:
    """The turn's skills (catalog and ``host_skills`` section), None when skills are off."""
    if caches.skills is None:
        return None
    skills, skill_notes = await capture_skills(
        caches.skills, turn.cwd, turn.turn_id, turn.model, turn.session.config
    )
    if settings.on_warning is not None:
        for warning in skill_notes:
            settings.on_warning(warning)
    return skills


async def _workspace(
    settings: CaptureSettings, caches: CaptureCaches, notes: list[str]
) -> WorkspaceFiles | None:
    """This step's workspace file set, or the previous step's (with a note) when it is late."""
    scanned = await caches.workspace_call.call(caches.scanner.scan, settings.workspace_deadline_s)
    if isinstance(scanned, Late):
        stale = caches.last_workspace
        what = "listing the workspace files"
        notes.append(_late_note(what, settings.workspace_deadline_s, stale is not None))
        return stale
    caches.last_workspace = scanned
    notes.extend(caches.scanner.warnings)
    return scanned


async def _mcp_binding(
    settings: CaptureSettings, runtime: McpRuntime | None, required: Collection[str]
) -> McpBinding:
    mcp = await runtime.binding_for_step(required) if runtime is not None else McpBinding.empty()
    if settings.on_warning is not None:
        for notice in mcp.notices:
            settings.on_warning(notice)
    return mcp


def _permissions(step: StepContext) -> PermissionsSection:
    turn = step.turn
    session = turn.session
    note = None
    if turn.sandbox.mode != "danger-full-access" and step.sandbox.kind == "none":
        allowed = session.config.sandbox.allow_unsandboxed
        note = unsandboxed_note(step.sandbox.reason, allowed=allowed)
    elif turn.sandbox.mode == "workspace-write" and step.sandbox.kind == "landlock":
        note = landlock_note()
    roots = writable_roots(turn.sandbox, str(turn.cwd), tmpdir=session.env.get("TMPDIR"))
    return PermissionsSection(
        turn.approval_policy,
        turn.sandbox.mode,
        # What the tools enforce: for workspace-write, the cwd, the extra roots and the tmp dirs.
        writable_roots=[str(root) for root in roots.roots],
        network_access=turn.sandbox.network_access,
        approved_command_prefixes=step.approved_prefixes,
        sandbox_note=note,
    )


def _late_note(what: str, deadline_s: float, stale: bool) -> str:
    outcome = (
        "what you see is from an earlier request and may be out of date"
        if stale
        else "it is not included in this request"
    )
    return f"{what} took longer than {deadline_s:g} s; {outcome}"


def build_world_state(
    step: StepContext,
    *,
    previous_model: str | None,
    extensions: Sequence[WorldStateExtension] = (),
    persist_cap: int = 2000,
    render_cap: int = 100,
    stores: ExtensionStores | None = None,
) -> WorldState:
    """The step's WorldState in the built-in order, then extension sections (DESIGN §4)."""
    turn = step.turn
    world_state = WorldState()
    world_state.add(ModelSection(turn.model, turn.base_instructions, previous_model))
    if step.agents_md is not None:  # None: not loaded in time (see step.notes)
        loaded = step.agents_md
        world_state.add(
            AgentsMdSection(loaded.text, loaded.directory, environments=loaded.environments)
        )
    world_state.add(_permissions(step))
    world_state.add(
        EnvironmentsSection(
            step.environments,
            current_date=turn.current_date,
            timezone=turn.timezone,
            subagents=step.subagents,
        )
    )
    if turn.session.config.features.deferred_executor:
        world_state.add(EnvironmentsInstructions(True))
    if step.executor_skills is not None:
        world_state.add(ExecutorSkillsSection(render_executor_skills(step.executor_skills)))
    if step.workspace is not None:  # None: not listed in time (see step.notes)
        world_state.add(
            WorkspaceSection(step.workspace, persist_cap=persist_cap, render_cap=render_cap)
        )
    pending_mcp = step.mcp.pending if step.mcp is not None else {}
    world_state.add(ToolsSection({**pending_mcp, **step.router.namespaces()}))
    world_state.add(CaptureNotesSection(step.notes))
    if step.skills is not None and step.skills.section is not None:
        world_state.add(step.skills.section)  # goes just before `permissions` (WorldState.add)
    if extensions:
        context = extension_context(step, stores or ExtensionStores())
        for section in contribute_sections(extensions, context):
            world_state.add(section)
    return world_state
