"""Restoring a session from its rollout: history, world-state baseline, reference context,
previous model, window, approved command prefixes and token totals (resume)."""

from __future__ import annotations

from pathlib import Path

from mini_codex.context import ContextManager
from mini_codex.models.tokens import estimate_context_tokens
from mini_codex.rollout.resume import last_token_info, load_resume_state
from mini_codex.runtime.approvals import SessionApprovals
from mini_codex.runtime.turn import TokenTotals, TurnState
from mini_codex.world_state import WorldStateSnapshot

__all__ = ["restore_session"]


def restore_session(
    path: Path,
    history: ContextManager,
    state: TurnState,
    approvals: SessionApprovals,
    *,
    base_instructions: str,
    model: str,
) -> str:
    """Load ``path`` into the session's history, state and approvals; returns the thread id."""
    resumed = load_resume_state(path)
    meta = resumed.session_meta
    history.replace(resumed.history)
    if resumed.world_state is not None:
        history.set_world_state_baseline(WorldStateSnapshot.from_json(resumed.world_state))
        # Commands approved for the session stay approved when it is resumed.
        permissions = resumed.world_state.get("permissions")
        saved = (
            permissions.get("approved_command_prefixes") if isinstance(permissions, dict) else None
        )
        for prefix in saved if isinstance(saved, list) else []:
            if isinstance(prefix, list):
                approvals.approve_prefix([str(word) for word in prefix])
    state.reference_context = resumed.reference_context
    settings = resumed.previous_turn_settings
    state.previous_model = settings.model if settings is not None else None
    state.window = resumed.window
    _restore_tokens(path, history, state, base_instructions=base_instructions, model=model)
    return meta.thread_id if meta is not None else path.stem


def _restore_tokens(
    path: Path, history: ContextManager, state: TurnState, *, base_instructions: str, model: str
) -> None:
    """Token totals and the active context tokens survive a resume (the newest
    ``token_count``; the context is estimated from the history when none says it)."""
    info = last_token_info(path)
    totals = info.get("total_token_usage") if info is not None else None
    if isinstance(totals, dict):
        for key in TokenTotals.__dataclass_fields__:
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
