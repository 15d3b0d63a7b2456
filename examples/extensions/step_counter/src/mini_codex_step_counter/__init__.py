"""An example world-state extension for mini-codex (see docs/extensions.md).

It contributes one section, ``step_counter``, telling the model which turn and which step of the
turn this request is, and how many capability roots are ready. The counts live in the stores
mini-codex hands to every contribution: the turn number in the thread store (it survives across
turns), the step number in the turn store (it survives across the steps of one turn and starts
again in the next turn), and the number of contributions in the session store.
"""

from __future__ import annotations

from collections.abc import Sequence

from mini_codex.jsonmerge import Json
from mini_codex.world_state import ExtensionContext, ExtensionSection, Fragment, Known, Previous

__all__ = ["StepCounter"]


class StepCounter:
    """Registered as ``step_counter`` in the ``mini_codex.world_state`` entry point group."""

    def contribute(self, ctx: ExtensionContext) -> Sequence[ExtensionSection]:
        turns: list[str] = ctx.thread_store.setdefault("step_counter.turns", [])
        if ctx.turn_id not in turns:
            turns.append(ctx.turn_id)
        step = ctx.turn_store.get("step_counter.step", 0) + 1
        ctx.turn_store["step_counter.step"] = step
        ctx.session_store["step_counter.calls"] = ctx.session_store.get("step_counter.calls", 0) + 1
        primary = next((env.id for env in ctx.environments if env.is_primary), None)
        snapshot: Json = {
            "thread": ctx.thread_id,
            "turn": len(turns),
            "step": step,
            "ready_roots": len(ctx.ready_capability_roots),
            "environment": primary,
        }
        body = (
            f"Thread {ctx.thread_id}: turn {len(turns)}, step {step} of this turn; "
            f"{len(ctx.ready_capability_roots)} ready capability roots; environment {primary}."
        )

        def render(previous: Previous[Json]) -> Fragment | None:
            if isinstance(previous, Known) and previous.snapshot == snapshot:
                return None
            return Fragment("developer", "<step_counter>", "</step_counter>", body)

        return [ExtensionSection(id="step_counter", snapshot=snapshot, render=render)]
