"""The SDK's elicitation callback against the real ``server-everything`` (stdio): the thread's
``elicitation_callback`` is asked and its answer reaches the server; an answer the schema
refuses is declined; without a callback the request is declined."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from mini_codex.protocol import FunctionCall
from mini_codex.sdk import Codex, ElicitationAnswer, ElicitationRequest
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
EVERYTHING_BIN = REPO / "node_modules" / ".bin" / "mcp-server-everything"


def codex(tmp_path: Path, model: ScriptedModel) -> Codex:
    if shutil.which("node") is None or not EVERYTHING_BIN.exists():
        pytest.skip("node or node_modules is missing (run `npm ci` at the repository root)")
    server = {"command": "node", "args": [str(EVERYTHING_BIN), "stdio"], "required": True}
    return Codex(tmp_path / "home", model_client=model, mcp_servers={"everything": server})


def script() -> ScriptedModel:
    call = FunctionCall(
        name="trigger_elicitation_request",
        namespace="mcp__everything",
        arguments="{}",
        call_id="e1",
    )
    return ScriptedModel([ScriptedResponse([call]), ScriptedResponse([assistant("done")])])


def raw_result(items: list[Any]) -> object:
    """What the server received (the ``Raw result: {...}`` it answers with)."""
    (call,) = [item for item in items if item.type == "mcp_tool_call"]
    text = call.result.content[-1]["text"]
    return json.loads(text.split("Raw result: ", 1)[1])


async def test_the_callback_answers_and_its_answer_reaches_the_server(tmp_path: Path) -> None:
    asked: list[ElicitationRequest] = []

    async def answer(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"name": "Ada", "integer": 9})

    client = codex(tmp_path, script())
    thread = client.start_thread(working_directory=tmp_path, elicitation_callback=answer)
    turn = await thread.run("fill the form")
    assert turn.final_response == "done"
    assert [(r.server, r.message, r.mode) for r in asked] == [
        ("everything", "Please provide inputs for the following fields:", "form")
    ]
    assert asked[0].requested_schema["required"] == ["name"]
    assert raw_result(turn.items) == {
        "action": "accept",
        "content": {"name": "Ada", "integer": 9},
    }


async def test_an_answer_the_schema_refuses_is_declined(tmp_path: Path) -> None:
    async def answer(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("accept", {"integer": 9})  # "name" is required

    thread = codex(tmp_path, script()).start_thread(
        working_directory=tmp_path, elicitation_callback=answer
    )
    turn = await thread.run("fill the form")
    assert raw_result(turn.items) == {"action": "decline"}


async def test_without_a_callback_the_request_is_declined(tmp_path: Path) -> None:
    thread = codex(tmp_path, script()).start_thread(working_directory=tmp_path)
    turn = await thread.run("fill the form")
    assert raw_result(turn.items) == {"action": "decline"}
