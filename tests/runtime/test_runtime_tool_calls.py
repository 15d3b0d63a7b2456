"""Tool calls inside a sampling request (spec/codex-runtime.md §5.2, §5.4, §5.5; DESIGN I8).

* Parallel-capable tools share a read lock and overlap; other tools take the write lock: two serial
  tools never overlap, and a serial tool never overlaps a parallel one. Measured with real sleeps
  through the intervals each call logged (no wall-time assertions).
* The call item is recorded before the tool runs; outputs are recorded in call order even when a
  later call finishes first.
* Cancellation gives unfinished calls the aborted outputs of §5.4.
* Unknown tools, malformed arguments, payload-kind mismatches and tool bugs are answered to the
  model, never raised.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from runtime_harness import (
    Interval,
    SleepTool,
    builtin_tools,
    describe_rollout,
    layout,
    open_session,
    overlaps,
)

from mini_codex.host import Session
from mini_codex.protocol import (
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    ResponseItem,
)
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.protocol.session_events import ToolCallEnd
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.runtime.tool_router import RegisteredTool, ToolRouter
from mini_codex.runtime.tool_runtime import ToolCallItem, ToolCallRuntime, aborted_output_text
from mini_codex.testing import ScriptedResponse, assistant, custom_tool_call, function_call
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

pytestmark = pytest.mark.anyio

SLEEP = 0.15


async def run_calls(
    tmp_path: Path, tools: list[SleepTool], calls: list[FunctionCall]
) -> dict[str, Interval]:
    """One response with ``calls``, then a final answer; returns each call's interval by id."""
    script = [ScriptedResponse(calls), ScriptedResponse([assistant("done")])]
    async with open_session(tmp_path, script, tools=tools) as run:
        assert await run.session.run_turn("go") == "done"
    return {interval.call_id: interval for tool in tools for interval in tool.log}


def call(name: str, call_id: str, seconds: float = SLEEP) -> FunctionCall:
    return function_call(name, {"seconds": seconds}, call_id)


# --- parallel vs serial -----------------------------------------------------------------------


async def test_two_parallel_capable_calls_overlap(tmp_path: Path) -> None:
    tools = [SleepTool("read_a", parallel=True), SleepTool("read_b", parallel=True)]
    runs = await run_calls(tmp_path, tools, [call("read_a", "a"), call("read_b", "b")])
    assert overlaps(runs["a"], runs["b"])


async def test_two_calls_of_one_parallel_tool_overlap(tmp_path: Path) -> None:
    tools = [SleepTool("read", parallel=True)]
    runs = await run_calls(tmp_path, tools, [call("read", "a"), call("read", "b")])
    assert overlaps(runs["a"], runs["b"])


async def test_two_serial_calls_never_overlap(tmp_path: Path) -> None:
    tools = [SleepTool("write_a"), SleepTool("write_b")]
    runs = await run_calls(tmp_path, tools, [call("write_a", "a"), call("write_b", "b")])
    assert not overlaps(runs["a"], runs["b"])
    assert runs["a"].end <= runs["b"].start


@pytest.mark.parametrize(
    "order",
    [("read", "write", "read2"), ("write", "read", "read2"), ("read", "read2", "write")],
)
async def test_a_serial_call_never_overlaps_a_parallel_one(
    tmp_path: Path, order: tuple[str, ...]
) -> None:
    tools = [
        SleepTool("read", parallel=True),
        SleepTool("write"),
        SleepTool("read2", parallel=True),
    ]
    runs = await run_calls(tmp_path, tools, [call(name, name) for name in order])
    assert len(runs) == 3
    assert not overlaps(runs["write"], runs["read"])
    assert not overlaps(runs["write"], runs["read2"])


async def test_an_unknown_tool_is_serial(tmp_path: Path) -> None:
    """``supports_parallel`` of an unknown name is false; it is answered without running."""
    router = ToolRouter.build([RegisteredTool(SleepTool("read", parallel=True))])
    assert router.supports_parallel("read")
    assert not router.supports_parallel("missing")


# --- recording order --------------------------------------------------------------------------


async def test_outputs_are_recorded_in_call_order_when_a_later_call_finishes_first(
    tmp_path: Path,
) -> None:
    tools = [SleepTool("slow", parallel=True), SleepTool("fast", parallel=True)]
    script = [
        ScriptedResponse([call("slow", "c_slow", 0.2), call("fast", "c_fast", 0.0)]),
        ScriptedResponse([assistant("done")]),
    ]
    async with open_session(tmp_path, script, tools=tools) as run:
        assert await run.session.run_turn("go") == "done"

    assert tools[1].log[0].end < tools[0].log[0].end  # fast really finished first
    assert [e.call_id for e in run.events_of(ToolCallEnd)] == ["c_fast", "c_slow"]
    expected: list[ResponseItem] = [
        FunctionCallOutput(call_id="c_slow", output="slow done"),
        FunctionCallOutput(call_id="c_fast", output="fast done"),
    ]
    assert list(run.prompts[1].input[-2:]) == expected
    assert describe_rollout(run.rollout())[8:12] == [
        "item function_call/slow",
        "item function_call/fast",
        "item function_call_output:slow done",
        "item function_call_output:fast done",
    ]


async def test_the_call_item_is_recorded_before_the_tool_runs(tmp_path: Path) -> None:
    """I8: when a tool starts, history already ends with its call item."""
    seen: list[ResponseItem] = []
    sessions: list[Session] = []

    async def look(ctx: ToolContext) -> None:
        seen.append(sessions[0].history.items[-1])

    tool = SleepTool("look", on_start=look)
    script = [
        ScriptedResponse([function_call("look", {}, "call_1")]),
        ScriptedResponse([assistant("done")]),
    ]
    async with open_session(tmp_path, script, tools=[tool]) as run:
        sessions.append(run.session)
        await run.session.run_turn("go")

    assert seen == [FunctionCall(name="look", arguments="{}", call_id="call_1", id="fc_1_0")]


# --- aborted outputs --------------------------------------------------------------------------

ABORTED = re.compile(r"aborted by user after (\d+\.\d)s")
SHELL_ABORTED = re.compile(r"Wall time: (\d+\.\d) seconds\naborted by user")


def aborted_secs(pattern: re.Pattern[str], text: str) -> float:
    match = pattern.fullmatch(text)
    assert match is not None, text
    return float(match.group(1))


async def test_cancellation_aborts_unfinished_calls_and_keeps_finished_results(
    tmp_path: Path,
) -> None:
    slow = SleepTool("slow", parallel=True, delay=60)
    quick = SleepTool("quick", parallel=True)
    script = [
        ScriptedResponse([function_call("slow", {}, "c_slow"), function_call("quick", {}, "c_q")])
    ]
    async with open_session(tmp_path, script, tools=[slow, quick]) as run:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run.session.run_turn, "go")
                await slow.started.wait()
                await quick.finished.wait()
                run.session.interrupt()

        items = run.session.history.items
        assert layout(items)[-6:] == [
            "message/user:go",
            "function_call/slow",
            "function_call/quick",
            f"function_call_output:{items[-3].output}",  # type: ignore[union-attr]
            "function_call_output:quick done",
            "message/user:<turn_aborted>",
        ]
        slow_output = items[-3]
        assert isinstance(slow_output, FunctionCallOutput)
        assert isinstance(slow_output.output, str)
        secs = aborted_secs(ABORTED, slow_output.output)
        assert slow_output == FunctionCallOutput(
            call_id="c_slow", output=aborted_output_text("slow", secs)
        )
        assert describe_rollout(run.rollout())[-2:] == [
            "item message/user:<turn_aborted>",
            "event turn_aborted",
        ]
        assert check_rollout(run.rollout()).violations == []
    # Every begun call has an end: the aborted one as a failure with the aborted text.
    ends = [(e.call_id, e.success, e.output) for e in run.events_of(ToolCallEnd)]
    assert ends == [("c_q", True, "quick done"), ("c_slow", False, slow_output.output)]


async def test_a_cancelled_shell_command_gets_the_shell_aborted_output(tmp_path: Path) -> None:
    # The command says it started through a FIFO in the cwd (visible in the sandbox); the test
    # waits for that, not for a while.
    command = "echo started > started.fifo; sleep 60"
    script = [
        ScriptedResponse(
            [
                function_call("shell", {"command": command}, "c_sh"),
                custom_tool_call("apply_patch_missing", "x", "c_other"),
            ]
        )
    ]
    tools = builtin_tools()
    (tmp_path / "work").mkdir()
    fifo = tmp_path / "work" / "started.fifo"
    os.mkfifo(fifo)
    started = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # readable once the shell wrote
    try:
        async with open_session(tmp_path, script, tools=tools) as run:
            with run.session.subscribe() as events, anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(run.session.run_turn, "wait")
                    async for event in events:
                        if isinstance(event, ToolCallEnd):  # the unknown tool answered
                            break
                    await anyio.wait_readable(started)  # the shell runs its command
                    run.session.interrupt()
    finally:
        os.close(started)

    outputs = [item for item in run.session.history.items if not hasattr(item, "role")][-2:]
    shell_output, other = outputs
    assert isinstance(shell_output, FunctionCallOutput)
    assert isinstance(shell_output.output, str)
    secs = aborted_secs(SHELL_ABORTED, shell_output.output)
    assert shell_output == FunctionCallOutput(
        call_id="c_sh", output=aborted_output_text("shell", secs)
    )
    assert other == CustomToolCallOutput(
        call_id="c_other", output="unsupported custom tool call: apply_patch_missing"
    )


@dataclass
class FakeClock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


def context_for(call: ToolCallItem) -> ToolContext:
    return ToolContext(
        cwd=Path("/"),
        sandbox=SandboxPolicy.read_only(),
        call_id=call.call_id,
        turn_id="turn",
        step_id="step",
    )


@pytest.mark.parametrize(
    ("name", "elapsed", "text"),
    [
        ("slow", 2.34, "aborted by user after 2.3s"),
        ("slow", 0.0, "aborted by user after 0.1s"),
        ("shell", 2.34, "Wall time: 2.3 seconds\naborted by user"),
        ("shell", 0.01, "Wall time: 0.1 seconds\naborted by user"),
    ],
)
async def test_aborted_outputs_are_measured_from_dispatch_to_cancellation(
    name: str, elapsed: float, text: str
) -> None:
    clock = FakeClock()
    tool = SleepTool(name, delay=60)
    router = ToolRouter.build([RegisteredTool(tool)])
    ended: list[tuple[str, ToolOutput]] = []
    async with anyio.create_task_group() as tg:
        runtime = ToolCallRuntime(
            router,
            context_for,
            tg,
            clock=clock,
            on_end=lambda call, output, _: ended.append((call.call_id, output)),
        )
        runtime.handle_tool_call(function_call(name, {}, "c1"))
        await tool.started.wait()
        clock.now += elapsed
        tg.cancel_scope.cancel()
    assert runtime.outputs() == [FunctionCallOutput(call_id="c1", output=text)]
    assert aborted_output_text(name, elapsed) == text
    clock.now += 5.0  # asking again gives the same output and no second notice
    assert runtime.outputs() == [FunctionCallOutput(call_id="c1", output=text)]
    assert ended == [("c1", ToolOutput.failure(text))]


async def test_a_call_waiting_for_the_lock_is_aborted_too() -> None:
    clock = FakeClock()
    first, second = SleepTool("first", delay=60), SleepTool("second")
    router = ToolRouter.build([RegisteredTool(first), RegisteredTool(second)])
    async with anyio.create_task_group() as tg:
        runtime = ToolCallRuntime(router, context_for, tg, clock=clock)
        runtime.handle_tool_call(function_call("first", {}, "c1"))
        runtime.handle_tool_call(function_call("second", {}, "c2"))
        await first.started.wait()
        clock.now += 1.0
        tg.cancel_scope.cancel()
    assert not second.started.is_set()
    assert runtime.outputs() == [
        FunctionCallOutput(call_id="c1", output="aborted by user after 1.0s"),
        FunctionCallOutput(call_id="c2", output="aborted by user after 1.0s"),
    ]


async def test_a_call_into_a_left_out_mcp_server_is_answered_with_its_note() -> None:
    """Whether the server failed before the capture (left out) or after (a call waits for it),
    the model is told why; only a name no step knows is an "unsupported call"."""
    note = "MCP server 'guarded' needs login: run `mini-codex mcp login guarded`"
    async with anyio.create_task_group() as tg:
        runtime = ToolCallRuntime(
            ToolRouter.empty(), context_for, tg, unavailable={"mcp__guarded": note}
        )
        runtime.handle_tool_call(
            FunctionCall(name="whoami", namespace="mcp__guarded", arguments="{}", call_id="c1")
        )
        runtime.handle_tool_call(function_call("mcp__guarded__whoami", {}, "c2"))
        runtime.handle_tool_call(function_call("mcp__other__whoami", {}, "c3"))
        runtime.handle_tool_call(
            FunctionCall(name="whoami", namespace="mcp__other", arguments="{}", call_id="c4")
        )
    assert runtime.outputs() == [
        FunctionCallOutput(call_id="c1", output=note),
        FunctionCallOutput(call_id="c2", output=note),
        FunctionCallOutput(call_id="c3", output="unsupported call: mcp__other__whoami"),
        FunctionCallOutput(call_id="c4", output="unsupported call: mcp__other__whoami"),
    ]


# --- answered to the model, never raised -------------------------------------------------------


@dataclass
class BrokenTool:
    """A tool with a bug: it raises."""

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name="broken", description="raises", kind="function")

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("kaput")


async def test_bad_calls_are_answered_to_the_model_and_the_turn_goes_on(tmp_path: Path) -> None:
    script = [
        ScriptedResponse(
            [
                function_call("nope", {}, "c1"),
                custom_tool_call("nope_custom", "x", "c2"),
                function_call("shell", "{not json", "c3"),
                function_call("shell", {}, "c4"),
                custom_tool_call("shell", "ls", "c5"),
                function_call("broken", {}, "c6"),
                function_call("update_plan", {"plan": "soon"}, "c7"),
            ]
        ),
        ScriptedResponse([assistant("sorry")]),
    ]
    tools = [*builtin_tools(), BrokenTool()]
    async with open_session(tmp_path, script, tools=tools) as run:
        assert await run.session.run_turn("go") == "sorry"

    outputs = list(run.prompts[1].input[-7:])
    assert outputs[:6] == [
        FunctionCallOutput(call_id="c1", output="unsupported call: nope"),
        CustomToolCallOutput(call_id="c2", output="unsupported custom tool call: nope_custom"),
        FunctionCallOutput(
            call_id="c3",
            output="Invalid arguments for shell: expected a JSON object, got '{not json'",
        ),
        FunctionCallOutput(
            call_id="c4", output="Invalid arguments for shell:\n- command: Field required"
        ),
        CustomToolCallOutput(call_id="c5", output="tool shell invoked with incompatible payload"),
        FunctionCallOutput(call_id="c6", output="tool broken failed: kaput"),
    ]
    assert isinstance(outputs[6], FunctionCallOutput)
    assert outputs[6].call_id == "c7"
    assert str(outputs[6].output).startswith("Invalid arguments for update_plan")
    assert [e.success for e in run.events_of(ToolCallEnd)] == [False] * 7
