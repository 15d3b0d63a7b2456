"""A tool call runs against the step that advertised it (DESIGN §3, spec/codex-runtime.md §11.1).

The registered tool set changes while a call of step 1 is running (as an MCP refresh would) and a
new step is captured meanwhile: the running call still executes the step-1 tool with the step-1
context, and only the next request advertises and executes the new tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from msgspec.structs import replace
from runtime_harness import open_session

from mini_codex.host import Session
from mini_codex.protocol import FunctionCallOutput
from mini_codex.runtime.capture import capture_step
from mini_codex.runtime.contexts import StepContext
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.testing import ScriptedResponse, assistant, function_call
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

pytestmark = pytest.mark.anyio


@dataclass
class VersionedTool:
    """``probe``, in a given version; logs (version, step id) of every call."""

    version: str
    log: list[tuple[str, str]]
    on_start: Callable[[ToolContext], Awaitable[None]] | None = None

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name="probe", description=f"probe {self.version}", kind="function")

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        if self.on_start is not None:
            await self.on_start(ctx)
        self.log.append((self.version, ctx.step_id))
        return ToolOutput(text=f"probe {self.version} ran on {ctx.step_id}", success=True)


@dataclass
class Refresh:
    """Swaps the session's tools to ``replacement`` and captures a step, from inside a tool."""

    replacement: VersionedTool
    session: Session | None = None
    refreshed: list[StepContext] = field(default_factory=list)

    async def __call__(self, ctx: ToolContext) -> None:
        assert self.session is not None
        session = self.session
        session.capture = replace(session.capture, tools=[RegisteredTool(self.replacement)])
        turn = session.new_turn_context()
        self.refreshed.append((await capture_step(turn, session.capture, session.caches, 99)).step)


async def test_a_running_call_keeps_its_step_after_a_refresh(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    v2 = VersionedTool("v2", log)
    refresh = Refresh(v2)
    v1 = VersionedTool("v1", log, on_start=refresh)
    script = [
        ScriptedResponse([function_call("probe", {}, "c1")]),
        ScriptedResponse([function_call("probe", {}, "c2")]),
        ScriptedResponse([assistant("done")]),
    ]
    async with open_session(tmp_path, script, tools=[v1]) as run:
        refresh.session = run.session
        assert await run.session.run_turn("probe twice") == "done"

    step1, step2, step3 = (prompt.step_id for prompt in run.prompts)
    (refreshed,) = refresh.refreshed
    # The refresh captured a different step that already sees v2 ...
    assert refreshed.step_id not in {step1, step2, step3}
    assert refreshed.router.lookup("probe") is v2
    # ... yet the running call executed v1 with the context of the step that advertised it.
    assert log == [("v1", step1), ("v2", step2)]
    assert [prompt.tools[0]["description"] for prompt in run.prompts] == [
        "probe v1",
        "probe v2",
        "probe v2",
    ]
    assert run.prompts[1].input[-1] == FunctionCallOutput(
        call_id="c1", output=f"probe v1 ran on {step1}"
    )
    assert run.prompts[2].input[-1] == FunctionCallOutput(
        call_id="c2", output=f"probe v2 ran on {step2}"
    )
