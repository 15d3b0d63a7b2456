"""Turn-start context updates and per-step world-state recording (spec/codex-runtime.md §3.5).

* ``record_context_updates`` runs once per turn on its first step: the full initial context when
  there is no reference context item, else a history-aware diff against the ContextManager
  baseline; then the ``world_state`` item, then (unless only the snapshot changed) ``turn_context``.
* ``record_step_world_state_if_changed`` runs before every model request: an exact diff against the
  previous step's live world state; items first, baseline, then a patch (never a full item).
"""

from __future__ import annotations

import msgspec

from mini_codex.protocol import TurnContextItem, TurnContextLine, WorldStateItem, WorldStateLine
from mini_codex.runtime.recording import Recording
from mini_codex.world_state import Fragment, WorldState, fragments_to_messages
from mini_codex.world_state.sections.model import ModelSection


class ContextUpdateResult(msgspec.Struct):
    world_state: WorldState
    reference_context: TurnContextItem | None
    changed_sections: tuple[str, ...]


def initial_context_order(fragments: list[Fragment]) -> list[Fragment]:
    """Order of a full initial context: model switch first, developer bundle, then user bundle."""
    model_ids = {id(f) for f in fragments if ModelSection.matches_legacy_fragment(f.role, f.text)}
    first = [f for f in fragments if id(f) in model_ids]
    rest = [f for f in fragments if id(f) not in model_ids]
    developer = [f for f in rest if f.role == "developer"]
    user = [f for f in rest if f.role != "developer"]
    return first + developer + user


async def record_context_updates(
    recording: Recording,
    world_state: WorldState,
    current: TurnContextItem,
    reference: TurnContextItem | None,
) -> ContextUpdateResult:
    """Record the turn-start context; returns the new reference context item."""
    history = recording.history
    if reference is None:
        fragments = initial_context_order(world_state.render_full())
        snapshot = world_state.snapshot()
        ws_item: WorldStateItem | None = WorldStateItem(full=True, state=snapshot.to_json())
        items = fragments_to_messages(fragments)
        await recording.record_items(items)
        history.set_world_state_baseline(snapshot)
    else:
        fragments, ws_item = history.update_world_state(world_state)
        items = fragments_to_messages(fragments)
        await recording.record_items(items)
    turn_context_changed = reference != current
    changed = tuple(sorted(ws_item.state)) if ws_item is not None else ()
    if not items and ws_item is None and not turn_context_changed:
        return ContextUpdateResult(world_state, reference, changed)
    if ws_item is not None:
        await recording.record_lines([WorldStateLine(payload=ws_item)])
    if not items and not turn_context_changed:
        return ContextUpdateResult(world_state, reference, changed)
    await recording.record_lines([TurnContextLine(payload=current)])
    return ContextUpdateResult(world_state, current, changed)


async def record_step_world_state_if_changed(
    recording: Recording, previous: WorldState, current: WorldState
) -> tuple[str, ...]:
    """Record what changed since the previous step; returns the changed section IDs."""
    fragments = current.render_diff(previous)
    snapshot = current.snapshot()
    patch = snapshot.merge_patch_from(previous.snapshot())
    await recording.record_items(fragments_to_messages(fragments))
    recording.history.set_world_state_baseline(snapshot)
    if patch is None:
        return ()
    await recording.record_lines([WorldStateLine(payload=WorldStateItem(full=False, state=patch))])
    return tuple(sorted(patch))
