"""Limits, cancellation, errors and approvals of child agents (``host/agents``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from subagent_script import RoutedModel, answer, call, outputs, user_texts

from mini_codex.config import Config
from mini_codex.errors import ModelError
from mini_codex.host import open_options
from mini_codex.host.assemble import SessionOptions
from mini_codex.models.base import Prompt
from mini_codex.protocol import EventMsgLine, FunctionCall, ResponseItem
from mini_codex.protocol.approvals import ApprovalAnswer, ApprovalRequest, ExecApprovalRequest
from mini_codex.protocol.events import TurnAborted
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.rollout.reader import read_rollout
from mini_codex.testing import ScriptedFailure


def shell(call_id: str, command: str) -> FunctionCall:
    return call(call_id, "shell", {"command": command}, namespace=None)


def options(tmp_path: Path, client: RoutedModel, **extra: Any) -> SessionOptions:
    config = extra.pop("config", {})
    (tmp_path / "work").mkdir(exist_ok=True)
    return SessionOptions(
        cwd=tmp_path / "work",
        home=tmp_path / "home",
        client=client,
        config=Config.model_validate({"features": {"multi_agent": True}, **config}),
        sandbox=extra.pop("sandbox", SandboxPolicy.danger_full_access()),
        approval_policy=extra.pop("approval_policy", "never"),
        admin_skills_root=None,
        **extra,
    )


def spawned(prompt: Prompt, call_id: str) -> str:
    return str(json.loads(outputs(prompt)[call_id])["agent_id"])


@pytest.mark.anyio
async def test_max_threads_refuses_a_spawn_until_an_agent_is_closed(tmp_path: Path) -> None:
    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent != "PARENT":
            return [answer(f"{agent} done")]
        spawns = [call(f"s{n}", "spawn_agent", {"message": f"CHILD-{n}"}) for n in (1, 2, 3)]
        if step == 0:
            return spawns
        if step == 1:
            return [call("c1", "close_agent", {"target": spawned(prompt, "s1")})]
        if step == 2:
            return [call("s4", "spawn_agent", {"message": "CHILD-4"})]
        return [answer("ok")]

    client = RoutedModel(script, ["PARENT", "CHILD-1", "CHILD-2", "CHILD-3", "CHILD-4"])
    config = {"agents": {"max_threads": 2}}
    async with open_options(options(tmp_path, client, config=config)) as session:
        await session.run_turn("PARENT")
        last = outputs(client.requests_of("PARENT")[-1])
        assert sorted(session.agents.children) == sorted(
            json.loads(last[key])["agent_id"] for key in ("s1", "s2", "s4")
        )
    assert last["s3"] == (
        "agent thread limit reached (agents.max_threads = 2); close an agent first"
    )
    assert json.loads(last["c1"])["previous_status"] in ("pending_init", "running",
                                                         {"completed": "CHILD-1 done"})  # fmt: skip
    assert "agent_id" in json.loads(last["s4"])


@pytest.mark.anyio
async def test_max_depth_2_lets_a_child_spawn_and_the_grandchild_gets_no_spawn_tools(
    tmp_path: Path,
) -> None:
    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent == "GRANDCHILD":
            return [answer("leaf")]
        if step == 0:
            message = "CHILD" if agent == "PARENT" else "GRANDCHILD"
            return [call("s", "spawn_agent", {"message": message})]
        if step == 1:
            return [call("w", "wait_agent", {"targets": [spawned(prompt, "s")]})]
        return [answer(json.dumps(json.loads(outputs(prompt)["w"])["status"]))]

    client = RoutedModel(script, ["GRANDCHILD", "CHILD", "PARENT"])
    config = {"agents": {"max_depth": 2}}
    async with open_options(options(tmp_path, client, config=config)) as session:
        result = await session.run_turn("PARENT")
        (child_id,) = session.agents.children
    metas = {
        m.id: m.model_dump()
        for m in (read_rollout(p).lines[0].payload for p in (tmp_path / "home").rglob("*.jsonl"))
    }
    (grandchild_id,) = [i for i, m in metas.items() if m.get("parent_thread_id") == child_id]
    grandchild = json.dumps({grandchild_id: {"completed": "leaf"}})
    assert json.loads(result or "") == {child_id: {"completed": grandchild}}

    def namespaces(agent: str) -> list[str]:
        return [t["name"] for t in client.requests_of(agent)[0].tools if t["type"] == "namespace"]

    assert namespaces("PARENT") == ["multi_agent_v1"]
    assert namespaces("CHILD") == ["multi_agent_v1"]
    assert namespaces("GRANDCHILD") == []
    spawns = {i: m["source"]["subagent"]["thread_spawn"] for i, m in metas.items() if "source" in m}
    assert {i: (s["depth"], s["parent_thread_id"]) for i, s in spawns.items()} == {
        child_id: (1, metas[child_id]["parent_thread_id"]),
        grandchild_id: (2, child_id),
    }


@pytest.mark.anyio
async def test_wait_timeout_below_the_minimum_is_raised_to_10_s(tmp_path: Path) -> None:
    async def gate(agent: str, step: int) -> None:
        if agent == "CHILD":
            await anyio.sleep(0.5)  # far longer than the 5 ms asked for

    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent == "CHILD":
            return [answer("slow answer")]
        if step == 0:
            return [call("s", "spawn_agent", {"message": "CHILD"})]
        if step == 1:
            target = spawned(prompt, "s")
            return [call("w", "wait_agent", {"targets": [target], "timeout_ms": 5})]
        return [answer(outputs(prompt)["w"])]

    client = RoutedModel(script, ["CHILD", "PARENT"], gate)
    async with open_options(options(tmp_path, client)) as session:
        result = await session.run_turn("PARENT")
        child = next(iter(session.agents.children))
    assert json.loads(result or "") == {
        "status": {child: {"completed": "slow answer"}},
        "timed_out": False,
    }


@pytest.mark.anyio
async def test_an_errored_child_is_reported_errored_with_a_notification(tmp_path: Path) -> None:
    def script(agent: str, step: int, prompt: Prompt) -> Any:
        if agent == "CHILD":
            return ScriptedFailure(ModelError("the provider refused the request"))
        if step == 0:
            return [call("s", "spawn_agent", {"message": "CHILD"})]
        if step == 1:
            return [call("w", "wait_agent", {"targets": [spawned(prompt, "s")]})]
        return [answer("seen")]

    client = RoutedModel(script, ["CHILD", "PARENT"])
    async with open_options(options(tmp_path, client)) as session:
        await session.run_turn("PARENT")
        child = next(iter(session.agents.children))
    last = client.requests_of("PARENT")[-1]
    status = {"errored": "the provider refused the request"}
    assert json.loads(outputs(last)["w"]) == {"status": {child: status}, "timed_out": False}
    note = json.dumps({"agent_path": child, "status": status}, separators=(",", ":"))
    assert f"<subagent_notification>\n{note}\n</subagent_notification>" in user_texts(last)


@pytest.mark.anyio
async def test_interrupting_the_parent_interrupts_its_running_child(tmp_path: Path) -> None:
    started = anyio.Event()

    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent == "CHILD":
            started.set()
            return [shell("long", "sleep 30")]
        if step == 0:
            return [call("s", "spawn_agent", {"message": "CHILD"})]
        return [call("w", "wait_agent", {"targets": [spawned(prompt, "s")]})]

    client = RoutedModel(script, ["CHILD", "PARENT"])
    begun = time.monotonic()
    async with open_options(options(tmp_path, client)) as session:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run_turn, "PARENT")
            await started.wait()
            await anyio.sleep(0.5)  # the child's command is running
            session.interrupt()
        child = next(iter(session.agents.children.values()))
        with anyio.fail_after(10):
            while child.status.kind != "interrupted":
                await session.agents.changed()
        assert child.open  # interrupted, not closed: it can get new input
        path = child.rollout_path
    assert time.monotonic() - begun < 20  # the 30 s command was killed
    assert not child.open
    assert child.status.kind == "shutdown"  # closing the parent closed it
    assert path is not None
    aborted = [
        line
        for line in read_rollout(path).lines
        if isinstance(line, EventMsgLine) and isinstance(line.payload, TurnAborted)
    ]
    assert len(aborted) == 1


@pytest.mark.anyio
async def test_a_childs_approval_request_goes_to_the_parents_callback(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="approved")

    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent == "CHILD":
            if step == 0:
                return [shell("touch", "touch made-by-child")]
            return [answer(outputs(prompt)["touch"])]
        if step == 0:
            return [call("s", "spawn_agent", {"message": "CHILD"})]
        if step == 1:
            return [call("w", "wait_agent", {"targets": [spawned(prompt, "s")]})]
        return [answer("done")]

    client = RoutedModel(script, ["CHILD", "PARENT"])
    opened = options(
        tmp_path,
        client,
        approval_policy="untrusted",
        sandbox=SandboxPolicy.danger_full_access(),
        approval_callback=approve,
    )
    async with open_options(opened) as session:
        await session.run_turn("PARENT")
    assert [type(r) for r in asked] == [ExecApprovalRequest]
    assert "touch made-by-child" in " ".join(asked[0].command)
    assert (tmp_path / "work" / "made-by-child").exists()
