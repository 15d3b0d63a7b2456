"""MCP tools on the wire: one namespace entry per server on Responses, namespaced calls back,
flat names on Chat Completions, and flat-name calls of older rollouts that still dispatch,
resume and replay."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp_harness import MixedFactory, inprocess_config, make_server

from mini_codex.config import Config
from mini_codex.host import SessionOptions, open_options
from mini_codex.models.chat_completions import chat_tools
from mini_codex.models.openai_responses import request_input
from mini_codex.protocol import FunctionCall, FunctionCallOutput, ResponseItemLine
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.testing import ScriptedModel, ScriptedResponse, ScriptStep, assistant

pytestmark = pytest.mark.anyio

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def _options(tmp_path: Path, model: ScriptedModel, resume: Path | None = None) -> SessionOptions:
    cwd, home = tmp_path / "work", tmp_path / "home"
    cwd.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    return SessionOptions(
        cwd=cwd,
        home=home,
        client=model,
        config=Config(mcp_servers={"toy": inprocess_config()}),
        env=ENV,
        mcp_factory=MixedFactory({"toy": make_server("toy")}),
        resume_path=resume,
    )


def _outputs(path: Path) -> list[str | list[object]]:
    return [
        line.payload.output
        for line in read_rollout(path).lines
        if isinstance(line, ResponseItemLine) and isinstance(line.payload, FunctionCallOutput)
    ]


async def test_namespaced_and_flat_calls_dispatch_and_keep_their_shape(tmp_path: Path) -> None:
    namespaced = FunctionCall(
        name="add", namespace="mcp__toy", arguments='{"a": 1, "b": 2}', call_id="c1"
    )
    flat = FunctionCall(name="mcp__toy__add", arguments='{"a": 3, "b": 4}', call_id="c2")
    model = ScriptedModel(
        [ScriptedResponse([namespaced, flat]), ScriptedResponse([assistant("ok")])]
    )
    async with open_options(_options(tmp_path, model)) as session:
        assert await session.run_turn("add") == "ok"
        path = session.rollout_path
    assert path is not None
    assert _outputs(path) == ['{"result":3}', '{"result":7}']
    sent = [
        item for item in request_input(model.prompts[1].input) if item["type"] == "function_call"
    ]
    assert sent == [
        {
            "type": "function_call",
            "name": "add",
            "namespace": "mcp__toy",
            "arguments": '{"a": 1, "b": 2}',
            "call_id": "c1",
        },
        {
            "type": "function_call",
            "name": "mcp__toy__add",
            "arguments": '{"a": 3, "b": 4}',
            "call_id": "c2",
        },
    ]
    # Chat Completions has no namespaces: the same tools, flat.
    specs, _ = chat_tools(model.prompts[0].tools)
    names = [spec["function"]["name"] for spec in specs]
    assert [name for name in names if name.startswith("mcp__")] == [
        "mcp__toy__add",
        "mcp__toy__echo",
    ]
    assert [name for name in names if "mcp_resource" in name] == [
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
    ]
    assert check_rollout(read_rollout(path).lines).violations == []


async def test_a_rollout_with_flat_names_resumes_and_replays(tmp_path: Path) -> None:
    first: list[ScriptStep] = [
        ScriptedResponse(
            [FunctionCall(name="mcp__toy__add", arguments='{"a": 1, "b": 1}', call_id="old")]
        ),
        ScriptedResponse([assistant("two")]),
    ]
    async with open_options(_options(tmp_path, ScriptedModel(first))) as session:
        await session.run_turn("one plus one")
        path = session.rollout_path
    assert path is not None
    later = ScriptedModel(
        [
            ScriptedResponse(
                [FunctionCall(name="add", namespace="mcp__toy", arguments='{"a": 2, "b": 2}',
                              call_id="new")]
            ),
            ScriptedResponse([assistant("four")]),
        ]
    )  # fmt: skip
    async with open_options(_options(tmp_path, later, resume=path)) as resumed:
        assert await resumed.run_turn("two plus two") == "four"
    replayed = [
        item for item in request_input(later.prompts[0].input) if item["type"] == "function_call"
    ]
    assert replayed == [
        {
            "type": "function_call",
            "name": "mcp__toy__add",
            "arguments": '{"a": 1, "b": 1}',
            "call_id": "old",
        }
    ]
    assert _outputs(path) == ['{"result":2}', '{"result":4}']
    assert check_rollout(read_rollout(path).lines).violations == []
