"""What a session does as it opens: start its execution environments (issue 26) and its MCP
servers, create its rollout (a new session) or
restore itself from one (resume: history, world-state baseline, reference context, previous
model, window, approved command prefixes and token totals)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import anyio
from anyio.abc import TaskGroup

from mini_codex._version import __version__
from mini_codex.config import Config
from mini_codex.context import ContextManager
from mini_codex.context.window import PreviousTurnSettings
from mini_codex.mcp.errors import McpError
from mini_codex.models.tokens import estimate_context_tokens
from mini_codex.protocol import SessionMeta
from mini_codex.rollout.paths import new_thread_id, rollout_path
from mini_codex.rollout.recorder import RecorderOptions, RolloutRecorder
from mini_codex.runtime.approvals import SessionApprovals
from mini_codex.runtime.capture import CaptureCaches
from mini_codex.runtime.environments_step import recorded_selections
from mini_codex.runtime.session_settings import SessionServices, SessionSettings
from mini_codex.runtime.turn_state import TokenTotals, TurnState
from mini_codex.world_state import WorldStateSnapshot

if TYPE_CHECKING:  # the MCP SDK is imported only when MCP servers are configured (issue 13)
    from mini_codex.environments.manager import ThreadEnvironments
    from mini_codex.mcp.runtime import McpRuntime
    from mini_codex.skills.service import SkillsService

__all__ = [
    "OpenedRollout",
    "checkpoint_if_due",
    "new_rollout",
    "open_rollout",
    "recorder_options",
    "restore_session",
    "start_environments",
    "start_mcp",
]


def start_environments(
    manager: ThreadEnvironments | None, task_group: TaskGroup
) -> anyio.CancelScope | None:
    """Environments hook (issue 26): connect the configured executors in the background; the
    returned scope ends them (the session's shutdown cancels it)."""
    if manager is None:
        return None
    scope = anyio.CancelScope()

    async def run() -> None:
        with scope:
            async with manager:
                await anyio.sleep_forever()

    task_group.start_soon(run)
    return scope


async def start_mcp(
    settings: SessionSettings,
    services: SessionServices,
    task_group: TaskGroup,
    on_warning: Callable[[str], None] | None = None,
) -> McpRuntime | None:
    """The configured MCP servers, started in the background (None without any); raises for a
    ``required`` one that does not start. The services' ``mcp_factory`` opens the clients
    (default: stdio / streamable HTTP, whose elicitations ``elicitation_callback`` answers)."""
    config = settings.config
    servers = {name: c for name, c in config.mcp_servers.items() if c.enabled}
    if not servers:
        return None
    from mini_codex.mcp.cache import CACHE_DIR_NAME, CatalogCache
    from mini_codex.mcp.client import StdioHttpClientFactory
    from mini_codex.mcp.runtime import McpRuntime

    environ: Mapping[str, str] = settings.environ or {}
    runtime = McpRuntime(
        servers,
        factory=services.mcp_factory
        or StdioHttpClientFactory(
            environ,
            home=settings.home,
            elicitation=services.elicitation_callback,
            on_warning=on_warning,
        ),
        cache=CatalogCache(settings.home / CACHE_DIR_NAME),
        grace_s=config.mcp_optional_startup_grace_ms / 1000,
    )
    await task_group.start(runtime.run)
    try:
        await runtime.wait_for_required()
    except McpError:
        with anyio.CancelScope(shield=True):
            await runtime.aclose()
        raise
    return runtime


def recorder_options(config: Config) -> RecorderOptions:
    rollout = config.rollout
    return RecorderOptions(
        fsync_at_turn_end=rollout.fsync_at_turn_end,
        fsync_on_shutdown=rollout.fsync_on_shutdown,
        checkpoint_every_items=rollout.checkpoint_every_items,
        checkpoint_every_bytes=rollout.checkpoint_every_bytes,
        checkpoint_min_ratio=rollout.checkpoint_min_ratio,
    )


def new_rollout(
    settings: SessionSettings, environments: list[dict[str, str]] | None = None
) -> tuple[str, Path | None, RolloutRecorder | None]:
    """A new session's thread id, and its rollout path and recorder when it persists;
    ``environments`` are the thread's selections recorded in ``session_meta`` (issue 26)."""
    now = settings.clock()
    session_id = settings.thread_id or new_thread_id(int(now.timestamp() * 1000), os.urandom(10))
    if not settings.persist:
        return session_id, None, None
    path = rollout_path(settings.home, now, session_id)
    meta = SessionMeta(
        id=session_id,
        session_id=session_id,
        timestamp=now.isoformat(),
        cwd=str(settings.cwd),
        originator="mini_codex",
        cli_version=__version__,
        model_provider=settings.config.model_provider,
        environments=environments,
        **dict(settings.session_meta_extra or {}),
    )
    return (
        session_id,
        path,
        RolloutRecorder(path, session_meta=meta, options=recorder_options(settings.config)),
    )


class OpenedRollout(NamedTuple):
    session_id: str
    path: Path | None
    recorder: RolloutRecorder | None
    selections: list[str] | None
    """The environment selections a resumed thread recorded (None: a new thread, or none)."""


def open_rollout(
    settings: SessionSettings,
    history: ContextManager,
    state: TurnState,
    approvals: SessionApprovals,
    caches: CaptureCaches,
) -> OpenedRollout:
    """Restore the session from ``settings.resume_path`` (and append to it), else create its
    rollout (recording the thread's environment selections)."""
    path = settings.resume_path
    if path is None:
        recorded = recorded_selections(caches.environments, str(settings.cwd))
        return OpenedRollout(*new_rollout(settings, recorded), None)
    session_id, selections = restore_session(
        path,
        history,
        state,
        approvals,
        base_instructions=settings.base_instructions,
        model=settings.model,
        skills=caches.skills,
    )
    recorder = RolloutRecorder(path, options=recorder_options(settings.config))
    return OpenedRollout(session_id, path, recorder, selections)


def restore_session(
    path: Path,
    history: ContextManager,
    state: TurnState,
    approvals: SessionApprovals,
    *,
    base_instructions: str,
    model: str,
    skills: SkillsService | None = None,
) -> tuple[str, list[str] | None]:
    """Load ``path`` into the session's history, state and approvals; returns the thread id and
    the environment selections recorded in its ``session_meta`` (None: none recorded)."""
    from mini_codex.rollout.resume import load_resume_state  # a new session replays nothing

    resumed = load_resume_state(path)
    meta = resumed.session_meta
    history.replace(resumed.history)
    if resumed.world_state is not None:
        history.set_world_state_baseline(WorldStateSnapshot.from_json(resumed.world_state))
        if "host_skills" in resumed.world_state and skills is not None:
            skills.mark_listed()  # the catalog is already in the history
        # Commands approved for the session stay approved when it is resumed.
        permissions = resumed.world_state.get("permissions")
        saved = (
            permissions.get("approved_command_prefixes") if isinstance(permissions, dict) else None
        )
        for prefix in saved if isinstance(saved, list) else []:
            if isinstance(prefix, list):
                approvals.approve_prefix([str(word) for word in prefix])
    selections = None
    if meta is not None and meta.environments is not None:  # issue 26: restore selections
        selections = [str(selection.get("environment_id")) for selection in meta.environments]
    state.reference_context = resumed.reference_context
    settings = resumed.previous_turn_settings
    state.previous_model = settings.model if settings is not None else None
    state.window = resumed.window
    _restore_tokens(path, history, state, base_instructions=base_instructions, model=model)
    return (meta.thread_id if meta is not None else path.stem), selections


def _restore_tokens(
    path: Path, history: ContextManager, state: TurnState, *, base_instructions: str, model: str
) -> None:
    """Token totals and the active context tokens survive a resume (the newest
    ``token_count``; the context is estimated from the history when none says it)."""
    from mini_codex.rollout.resume import last_token_info

    info = last_token_info(path)
    totals = info.get("total_token_usage") if info is not None else None
    if isinstance(totals, dict):
        for key in TokenTotals.__struct_fields__:
            value = totals.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(state.session_tokens, key, value)
    active = info.get("context_tokens") if info is not None else None
    last = info.get("last_token_usage") if info is not None else None
    if not isinstance(active, int) and isinstance(last, dict):
        active = last.get("total_tokens")
    if isinstance(active, int) and not isinstance(active, bool):
        state.context_tokens = active
    else:
        state.context_tokens = estimate_context_tokens(
            base_instructions, (), history.for_prompt(), model
        )


async def checkpoint_if_due(
    recorder: RolloutRecorder | None, history: ContextManager, state: TurnState
) -> None:
    """A rollout checkpoint (between steps), when the recorder says one is due."""
    if recorder is None or not recorder.checkpoint_due():
        return
    baseline = history.world_state_baseline
    settings = (
        PreviousTurnSettings(model=state.previous_model, comp_hash=None, realtime_active=None)
        if state.previous_model is not None
        else None
    )
    await recorder.write_checkpoint(
        history.items,
        baseline.to_json() if baseline is not None else None,
        state.reference_context,
        settings,
        state.window,
    )
