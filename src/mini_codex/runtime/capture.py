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
from dataclasses import dataclass, field

import anyio

from mini_codex.discovery.agents_md import AgentsMdCache, AgentsMdConfig, LoadedAgentsMd
from mini_codex.discovery.safe_read import display_path
from mini_codex.discovery.workspace import WorkspaceScanner
from mini_codex.mcp.binding import McpBinding
from mini_codex.mcp.runtime import McpRuntime
from mini_codex.runtime.contexts import StepContext, TurnContext
from mini_codex.runtime.deadline import DeadlineCall, Late
from mini_codex.runtime.mcp_tools import mcp_registered_tools
from mini_codex.runtime.tool_router import RegisteredTool, ToolRouter
from mini_codex.sandbox.bwrap import SandboxAvailability, detect_bwrap
from mini_codex.sandbox.policy import writable_roots
from mini_codex.world_state import WorldState, WorldStateExtension
from mini_codex.world_state.extensions import ExtensionContext, contribute_sections
from mini_codex.world_state.sections import (
    AgentsMdSection,
    EnvironmentsSection,
    ModelSection,
    PermissionsSection,
    ToolsSection,
)
from mini_codex.world_state.sections.capture_notes import CaptureNotesSection
from mini_codex.world_state.sections.environments import Environment
from mini_codex.world_state.sections.workspace import WorkspaceSection
from mini_codex.world_state.workspace_files import WorkspaceFiles

CaptureProbe = Callable[[str], Awaitable[None]]
"""Called with the phase name before each await of a capture (tests use it to cancel there)."""

CAPTURE_PHASES = ("environments", "agents_md", "sandbox", "workspace", "mcp", "tools")

DEFAULT_AGENTS_MD_DEADLINE_S = 0.5
"""AGENTS.md normally loads in well under a millisecond (a stat-validated cache)."""
DEFAULT_WORKSPACE_DEADLINE_S = 1.25
"""A first full scan of a 100k-file workspace takes ~0.5-0.7 s on a busy 2-core machine; both
deadlines together stay under 2 s."""


@dataclass
class StepServices:
    """Session-owned services a capture reads (caches live across steps)."""

    scanner: WorkspaceScanner
    agents_md: AgentsMdCache
    agents_md_config: AgentsMdConfig
    tools: Sequence[RegisteredTool]
    sandbox: SandboxAvailability | None = None
    extensions: Sequence[WorldStateExtension] = ()
    persist_cap: int = 2000
    render_cap: int = 100
    probe: CaptureProbe | None = None
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    mcp: McpRuntime | None = None
    """The session's MCP runtime; None means no MCP servers (every step gets an empty binding)."""
    on_warning: Callable[[str], None] | None = None
    """Told about MCP servers omitted from a step (once per connection set)."""
    agents_md_deadline_s: float = DEFAULT_AGENTS_MD_DEADLINE_S
    """How long the AGENTS.md phase may take before the step goes on without it (the model is
    told; the late work finishes in the background)."""
    workspace_deadline_s: float = DEFAULT_WORKSPACE_DEADLINE_S
    """The same for the workspace scan."""
    agents_md_call: DeadlineCall[LoadedAgentsMd] = field(
        default_factory=lambda: DeadlineCall("agents-md")
    )
    workspace_call: DeadlineCall[WorkspaceFiles] = field(
        default_factory=lambda: DeadlineCall("workspace")
    )
    last_agents_md: LoadedAgentsMd | None = None
    last_workspace: WorkspaceFiles | None = None


async def _phase(services: StepServices, name: str) -> None:
    if services.probe is not None:
        await services.probe(name)
    await anyio.lowlevel.checkpoint()


async def capture_step(
    turn: TurnContext,
    services: StepServices,
    sequence: int,
    *,
    required_mcp_servers: Collection[str] = (),
) -> StepContext:
    """Capture everything a model request may see; returns the complete, frozen step.

    ``required_mcp_servers``: servers named by ``mcp://NAME`` in the turn's input, waited for.
    """
    await _phase(services, "environments")
    shell_name = os.path.basename(turn.session.shell) or None
    environments = tuple(
        Environment(
            id=selection.id,
            cwd=str(selection.cwd),
            shell=shell_name,
            is_primary=index == 0,
        )
        for index, selection in enumerate(turn.environments)
    )

    notes: list[str] = []
    await _phase(services, "agents_md")
    loaded = await services.agents_md_call.call(
        functools.partial(services.agents_md.get, turn.cwd, services.agents_md_config),
        services.agents_md_deadline_s,
    )
    agents_md: LoadedAgentsMd | None
    if isinstance(loaded, Late):
        agents_md = services.last_agents_md
        late = _late_note("reading AGENTS.md", services.agents_md_deadline_s, agents_md is not None)
        notes.append(late)
    else:
        agents_md = services.last_agents_md = loaded
        notes.extend(loaded.warnings)

    await _phase(services, "sandbox")
    if services.sandbox is None:
        services.sandbox = await detect_bwrap()
    sandbox = services.sandbox

    await _phase(services, "workspace")
    scanned = await services.workspace_call.call(
        services.scanner.scan, services.workspace_deadline_s
    )
    workspace: WorkspaceFiles | None
    if isinstance(scanned, Late):
        workspace = services.last_workspace
        what = "listing the workspace files"
        notes.append(_late_note(what, services.workspace_deadline_s, workspace is not None))
    else:
        workspace = services.last_workspace = scanned
        notes.extend(services.scanner.warnings)

    await _phase(services, "mcp")
    if services.mcp is not None:
        mcp = await services.mcp.binding_for_step(required_mcp_servers)
    else:
        mcp = McpBinding.empty()
    if services.on_warning is not None:
        for notice in mcp.notices:
            services.on_warning(notice)

    await _phase(services, "tools")
    router = ToolRouter.build([*services.tools, *mcp_registered_tools(mcp)])

    return StepContext(
        turn=turn,
        step_id=services.new_id(),
        sequence=sequence,
        environments=environments,
        agents_md=agents_md,
        workspace=workspace,
        sandbox=sandbox,
        router=router,
        mcp=mcp,
        notes=tuple(display_path(note) for note in notes),
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
) -> WorldState:
    """The step's WorldState in the built-in order, then extension sections (DESIGN §4)."""
    turn = step.turn
    world_state = WorldState()
    world_state.add(ModelSection(turn.model, turn.base_instructions, previous_model))
    if step.agents_md is not None:  # None: not loaded in time (see step.notes)
        world_state.add(AgentsMdSection(step.agents_md.text, step.agents_md.directory))
    world_state.add(
        PermissionsSection(
            turn.approval_policy,
            turn.sandbox.mode,
            # What the tools enforce: for workspace-write, the cwd and the extra roots.
            writable_roots=[
                str(root) for root in writable_roots(turn.sandbox, str(turn.cwd)).roots
            ],
            network_access=turn.sandbox.network_access,
        )
    )
    world_state.add(
        EnvironmentsSection(
            step.environments, current_date=turn.current_date, timezone=turn.timezone
        )
    )
    if step.workspace is not None:  # None: not listed in time (see step.notes)
        world_state.add(
            WorkspaceSection(step.workspace, persist_cap=persist_cap, render_cap=render_cap)
        )
    pending_mcp = step.mcp.pending if step.mcp is not None else {}
    world_state.add(ToolsSection({**pending_mcp, **step.router.namespaces()}))
    world_state.add(CaptureNotesSection(step.notes))
    if extensions:
        context = ExtensionContext(cwd=str(turn.cwd), model=turn.model, turn_id=turn.turn_id)
        for section in contribute_sections(extensions, context):
            world_state.add(section)
    return world_state
