"""The ``update_plan`` tool (spec §5.6): the model keeps a short step list with statuses.

Arguments ``{"explanation"?: str, "plan": [{"step": str, "status": "pending" | "in_progress" |
"completed"}]}`` with at most one ``in_progress`` step. The tool answers ``Plan updated`` and keeps
the latest plan on the instance (``latest_plan``) for the runtime/UI; ``on_update`` is called with
every accepted plan. Serial (not parallel-capable), as in Codex.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mini_codex.tools.base import (
    ToolContext,
    ToolOutput,
    ToolSpec,
    parse_arguments,
)

__all__ = ["UPDATE_PLAN_PARAMETERS", "PlanItem", "PlanStatus", "PlanUpdate", "UpdatePlanTool"]

PlanStatus: TypeAlias = Literal["pending", "in_progress", "completed"]

UPDATE_PLAN_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "explanation": {"type": "string"},
        "plan": {
            "type": "array",
            "description": "The list of steps",
            "items": {
                "type": "object",
                "properties": {
                    "step": {"type": "string"},
                    "status": {
                        "type": "string",
                        "enum": ["pending", "in_progress", "completed"],
                        "description": "One of: pending, in_progress, completed",
                    },
                },
                "required": ["step", "status"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["plan"],
    "additionalProperties": False,
}


class PlanItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    step: str = Field(min_length=1)
    status: PlanStatus


class PlanUpdate(BaseModel):
    """One accepted ``update_plan`` call."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    explanation: str | None = None
    plan: tuple[PlanItem, ...]

    @model_validator(mode="after")
    def _one_in_progress(self) -> PlanUpdate:
        running = [item.step for item in self.plan if item.status == "in_progress"]
        if len(running) > 1:
            raise ValueError(
                "At most one step can be in_progress at a time; in_progress now: "
                + ", ".join(repr(step) for step in running)
            )
        return self


class UpdatePlanTool:
    """Validates and stores the model's plan."""

    def __init__(self, *, on_update: Callable[[PlanUpdate], None] | None = None) -> None:
        self.latest_plan: PlanUpdate | None = None
        self._on_update = on_update
        self._spec = ToolSpec.function("update_plan", UPDATE_PLAN_PARAMETERS)

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        update = parse_arguments("update_plan", PlanUpdate, payload)
        if isinstance(update, ToolOutput):
            return update
        self.latest_plan = update
        if self._on_update is not None:
            self._on_update(update)
        return ToolOutput(text="Plan updated", success=True)
