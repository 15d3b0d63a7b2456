"""The contributor inputs of one step for world-state extensions (Codex's
``WorldStateContributionInput``): ids, environments, ready capability roots and the stores."""

from __future__ import annotations

from mini_codex.runtime.contexts import StepContext
from mini_codex.world_state.extensions import (
    CapabilityRoot,
    ExtensionContext,
    ExtensionEnvironment,
    ExtensionStores,
)

__all__ = ["extension_context"]


def _capability_roots(step: StepContext) -> tuple[CapabilityRoot, ...]:
    if step.skills is None:
        return ()
    roots: list[CapabilityRoot] = []
    for root in step.skills.outcome.scanned_roots:
        prefix = f"plugin:{root.plugin}" if root.plugin else root.scope
        roots.append(CapabilityRoot(id=f"{prefix}:{root.path}", path=root.path))
    return tuple(roots)


def extension_context(step: StepContext, stores: ExtensionStores) -> ExtensionContext:
    turn = step.turn
    return ExtensionContext(
        cwd=str(turn.cwd),
        model=turn.model,
        turn_id=turn.turn_id,
        thread_id=turn.session.session_id,
        environments=tuple(
            ExtensionEnvironment(id=env.id, cwd=env.cwd, is_primary=env.is_primary)
            for env in step.environments
        ),
        ready_capability_roots=_capability_roots(step),
        session_store=stores.session,
        thread_store=stores.thread,
        turn_store=stores.for_turn(turn.turn_id),
        step_id=step.step_id,
    )
