"""Sub-agents in parallel: 4 children each running a 1 s command, against one child.

A parent session (``features.multi_agent``, opened through ``mini_codex.host.open_options``)
spawns N children in one response; each child runs ``sleep 1; echo done-K`` with the shell tool
and answers with the command's output; the parent waits (``wait_agent`` until every child is
final), closes them and answers. The model is scripted in process (``ScriptedModel`` per
request, routed by the agent's first message), so the figures are the runtime's own: session
opening, tool dispatch, the children's commands running concurrently.

Before any figure is printed the benchmark checks that both runs did the work: every child ran
its command (its answer carries ``done-K``), and the parent's waits reported every child
``completed`` with that answer. A run that did not stops with exit code 1.

Figures: the wall time of the parent's turn with 1 and with 4 children, ``parallel_ratio`` =
4 children / 1 child (the target is at most 1.3), and ``spawn_overhead_s``: per child, from the
end of the parent's spawning response to the child's first model request (its session opened,
its first step captured), the mean over the 4-child run's children.

Run: ``uv run python benchmarks/subagents.py [--runs 3]``; final line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from mini_codex.config import Config
from mini_codex.host import open_options
from mini_codex.host.assemble import SessionOptions
from mini_codex.models.base import ModelEvent, Prompt
from mini_codex.protocol import FunctionCall, FunctionCallOutput, Message, ResponseItem
from mini_codex.protocol.items import message_text
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant

NS = "multi_agent_v1"


class DidNotRun(RuntimeError):
    """A run did not do the scripted work: no figure may be printed."""


def _call(call_id: str, name: str, args: dict[str, Any], ns: str | None = NS) -> FunctionCall:
    return FunctionCall(name=name, arguments=json.dumps(args), call_id=call_id, namespace=ns)


def _outputs(prompt: Prompt) -> dict[str, str]:
    return {
        item.call_id: str(item.output)
        for item in prompt.input
        if isinstance(item, FunctionCallOutput)
    }


class Bench:
    """The routed model of one run: the parent's and the children's scripts, with timings."""

    def __init__(self, children: int) -> None:
        self.children = children
        self.steps: dict[str, int] = {}
        self.spawned_at = 0.0
        self.first_request: dict[str, float] = {}
        self.answers: dict[str, str] = {}
        self.final: dict[str, Any] = {}

    async def aclose(self) -> None:
        pass

    def _agent(self, prompt: Prompt) -> str:
        for item in prompt.input:
            if isinstance(item, Message) and item.role == "user":
                text = message_text(item)
                if text.startswith("CHILD-"):
                    return text.split(":")[0]
        return "PARENT"

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        agent = self._agent(prompt)
        step = self.steps.get(agent, 0)
        self.steps[agent] = step + 1
        if agent != "PARENT" and step == 0:
            self.first_request[agent] = time.perf_counter()
        output = self._child(agent, step, prompt) if agent != "PARENT" else self._parent(prompt)
        async for event in ScriptedModel([ScriptedResponse(output)]).stream(prompt):
            if agent == "PARENT" and step == 0:  # the stream's end: its last event
                self.spawned_at = time.perf_counter()
            yield event

    def _child(self, agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        k = agent.removeprefix("CHILD-")
        if step == 0:
            return [_call("run", "shell", {"command": f"sleep 1; echo done-{k}"}, None)]
        ran = _outputs(prompt).get("run", "")
        self.answers[agent] = ran
        return [assistant(f"done-{k}" if f"done-{k}" in ran else f"failed: {ran}")]

    def _parent(self, prompt: Prompt) -> list[ResponseItem]:
        found = _outputs(prompt)
        if not found:
            return [
                _call(f"spawn{k}", "spawn_agent", {"message": f"CHILD-{k}: run the command"})
                for k in range(self.children)
            ]
        ids = [json.loads(found[f"spawn{k}"])["agent_id"] for k in range(self.children)]
        for call_id, text in found.items():
            if call_id.startswith("wait"):
                self.final.update(json.loads(text)["status"])
        waiting = [i for i in ids if i not in self.final]
        if waiting:
            n = len([c for c in found if c.startswith("wait")])
            return [_call(f"wait{n}", "wait_agent", {"targets": waiting})]
        if not any(c.startswith("close") for c in found):
            return [_call(f"close{k}", "close_agent", {"target": i}) for k, i in enumerate(ids)]
        return [assistant("all done")]


async def run(children: int, root: Path) -> tuple[float, float]:
    """One run: the turn's wall time and the mean spawn overhead per child."""
    bench = Bench(children)
    work = root / f"work-{children}-{time.monotonic_ns()}"
    work.mkdir(parents=True)
    options = SessionOptions(
        cwd=work,
        home=root / "home",
        client=bench,
        config=Config.model_validate({"features": {"multi_agent": True}}),
        sandbox=SandboxPolicy.danger_full_access(),
        approval_policy="never",
        admin_skills_root=None,
        env={"PATH": "/usr/bin:/bin"},
    )
    async with open_options(options) as session:
        began = time.perf_counter()
        result = await session.run_turn("PARENT: run the children")
        wall = time.perf_counter() - began
    check(bench, result)
    overheads = [at - bench.spawned_at for at in bench.first_request.values()]
    return wall, statistics.mean(overheads)


def check(bench: Bench, result: str | None) -> None:
    """Every child ran its command and the parent saw each one completed with its answer."""
    if result != "all done":
        raise DidNotRun(f"the parent's turn ended with {result!r}")
    expected = {f"done-{k}" for k in range(bench.children)}
    if len(bench.answers) != bench.children:
        raise DidNotRun(f"{len(bench.answers)} of {bench.children} children answered")
    completed = {
        status.get("completed") for status in bench.final.values() if isinstance(status, dict)
    }
    if completed != expected:
        raise DidNotRun(
            f"the parent saw {sorted(map(str, completed))}, expected {sorted(expected)}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="subagents-bench-") as tmp:
        root = Path(tmp)
        try:
            one = [anyio.run(run, 1, root) for _ in range(args.runs)]
            four = [anyio.run(run, 4, root) for _ in range(args.runs)]
        except DidNotRun as error:
            print(f"did not run: {error}", file=sys.stderr)
            return 1
    one_wall = statistics.median(w for w, _ in one)
    four_wall = statistics.median(w for w, _ in four)
    overhead = statistics.median(o for _, o in four)
    print(f"1 child : {one_wall:.3f} s (median of {args.runs})")
    print(f"4 children: {four_wall:.3f} s (median of {args.runs})")
    print(f"spawn overhead per child: {overhead * 1000:.1f} ms")
    figures = {
        "one_child_s": round(one_wall, 4),
        "four_children_s": round(four_wall, 4),
        "parallel_ratio": round(four_wall / one_wall, 3),
        "spawn_overhead_s": round(overhead, 4),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
