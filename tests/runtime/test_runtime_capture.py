"""What a captured step shows the model (runtime/capture.py, DESIGN §3–§4).

* The step's world state has the built-in sections in the documented order.
* The permissions the model is told are the ones the tools enforce: under ``workspace-write`` the
  cwd and the configured extra roots are the writable roots.
* A capture is a frozen step with its own id and the given sequence; the router it holds does not
  change when the registered tools change afterwards.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from msgspec.structs import replace
from runtime_harness import SleepTool, open_session

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.runtime.capture import capture_step
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.testing import ScriptedResponse, assistant
from mini_codex.tools.apply_patch import ApplyPatchTool
from mini_codex.tools.base import ToolContext
from mini_codex.world_state.sections import PermissionsSection

pytestmark = pytest.mark.anyio


async def test_a_step_holds_the_sections_in_the_documented_order(tmp_path: Path) -> None:
    async with open_session(tmp_path, []) as run:
        turn = run.session.new_turn_context()
        step, world_state = await capture_step(turn, run.session.capture, run.session.caches, 7)
    assert world_state.ids == (
        "model",
        "agents_md",
        "permissions",
        "environments",
        "workspace",
        "tools",
        "capture_notes",
    )
    assert step.sequence == 7
    assert step.turn is turn


async def test_a_captured_router_ignores_tools_registered_afterwards(tmp_path: Path) -> None:
    async with open_session(tmp_path, [], tools=[SleepTool("old")]) as run:
        turn = run.session.new_turn_context()
        step, _ = await capture_step(turn, run.session.capture, run.session.caches, 1)
        run.session.capture = replace(run.session.capture, tools=[RegisteredTool(SleepTool("new"))])
        later, _ = await capture_step(turn, run.session.capture, run.session.caches, 2)
    assert [spec["name"] for spec in step.router.model_visible_specs()] == ["old"]
    assert [spec["name"] for spec in later.router.model_visible_specs()] == ["new"]
    assert step.step_id != later.step_id
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.step_id = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("extra_roots", [(), ("build",)])
async def test_the_model_is_told_the_writable_roots_the_tools_enforce(
    tmp_path: Path, extra_roots: tuple[str, ...]
) -> None:
    policy = SandboxPolicy.workspace_write(extra_roots)
    script = [ScriptedResponse([assistant("ok")])]
    async with open_session(tmp_path, script, sandbox=policy) as run:
        await run.session.run_turn("where may I write?")
        cwd = run.cwd
    roots = [str(cwd), *(str(cwd / root) for root in extra_roots), "/tmp"]
    expected = PermissionsSection("on-request", "workspace-write", writable_roots=roots)
    developer = run.prompts[0].input[0]
    assert developer.to_json()["content"][0]["text"] == expected.instructions_fragment().text
    assert "The writable roots are `" + str(cwd) + "`" in expected.instructions_fragment().text

    # ... and what the text says is what apply_patch enforces.
    patch = "*** Begin Patch\n*** Add File: inside.txt\n+ok\n*** End Patch\n"
    ctx = ToolContext(cwd=cwd, sandbox=policy, call_id="c", turn_id="t", step_id="s")
    output = await ApplyPatchTool(freeform=True).call(patch, ctx)
    assert output.success is True
    assert (cwd / "inside.txt").read_text() == "ok\n"
