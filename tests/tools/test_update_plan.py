"""update_plan: validation answered to the model, latest plan kept for the runtime."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.tools.base import ToolContext, ToolOutput
from mini_codex.tools.update_plan import PlanItem, PlanUpdate, UpdatePlanTool

pytestmark = pytest.mark.anyio

CTX = ToolContext(
    cwd=Path("/"), sandbox=SandboxPolicy.read_only(), call_id="c", turn_id="t", step_id="s"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_valid_plan_is_stored_and_reported() -> None:
    seen: list[PlanUpdate] = []
    tool = UpdatePlanTool(on_update=seen.append)
    payload = {
        "explanation": "starting",
        "plan": [
            {"step": "read the code", "status": "completed"},
            {"step": "fix the bug", "status": "in_progress"},
            {"step": "run tests", "status": "pending"},
        ],
    }
    assert await tool.call(json.dumps(payload), CTX) == ToolOutput("Plan updated", success=True)
    expected = PlanUpdate(
        explanation="starting",
        plan=(
            PlanItem(step="read the code", status="completed"),
            PlanItem(step="fix the bug", status="in_progress"),
            PlanItem(step="run tests", status="pending"),
        ),
    )
    assert tool.latest_plan == expected
    assert seen == [expected]
    await tool.call(json.dumps({"plan": []}), CTX)
    assert tool.latest_plan == PlanUpdate(plan=())


@pytest.mark.parametrize(
    ("payload", "text"),
    [
        (
            {
                "plan": [
                    {"step": "a", "status": "in_progress"},
                    {"step": "b", "status": "in_progress"},
                ]
            },
            "Invalid arguments for update_plan:\n- (arguments): Value error, At most one step can "
            "be in_progress at a time; in_progress now: 'a', 'b'",
        ),
        (
            {"plan": [{"step": "a", "status": "done"}]},
            "Invalid arguments for update_plan:\n- plan.0.status: Input should be 'pending', "
            "'in_progress' or 'completed'",
        ),
        ({}, "Invalid arguments for update_plan:\n- plan: Field required"),
        (
            {"plan": [{"status": "pending"}]},
            "Invalid arguments for update_plan:\n- plan.0.step: Field required",
        ),
        (
            {"plan": [{"step": "", "status": "pending"}]},
            "Invalid arguments for update_plan:\n- plan.0.step: String should have at least 1 "
            "character",
        ),
    ],
)
async def test_invalid_plans_are_answered_and_do_not_replace_the_latest(
    payload: object, text: str
) -> None:
    tool = UpdatePlanTool()
    await tool.call(json.dumps({"plan": [{"step": "keep", "status": "pending"}]}), CTX)
    kept = tool.latest_plan
    assert await tool.call(json.dumps(payload), CTX) == ToolOutput(text, success=False)
    assert tool.latest_plan == kept


async def test_non_json_arguments_are_answered() -> None:
    assert await UpdatePlanTool().call("plan: do it", CTX) == ToolOutput(
        "Invalid arguments for update_plan: expected a JSON object, got 'plan: do it'",
        success=False,
    )


def test_update_plan_is_a_serial_function_tool() -> None:
    spec = UpdatePlanTool().spec
    assert (spec.name, spec.kind, spec.supports_parallel) == ("update_plan", "function", False)
    assert "At most one step can be `in_progress` at a time." in spec.description
    assert spec.parameters is not None
    assert spec.parameters["required"] == ["plan"]
