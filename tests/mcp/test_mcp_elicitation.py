"""Elicitation: the answer rules (pure), and server-everything's ``trigger-elicitation-request``
answered by a handler that gives a wrong answer, and with no handler at all."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp_harness import EVERYTHING_BIN, everything_available

from mini_codex.config import McpServerConfig
from mini_codex.mcp.client import StdioHttpClientFactory
from mini_codex.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationHandler,
    ElicitationRequest,
    answer_problem,
    settle_answer,
)
from mini_codex.mcp.runtime import McpRuntime

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name"},
        "count": {"type": "integer", "minimum": 1},
        "color": {"type": "string", "enum": ["red", "blue"]},
    },
    "required": ["name"],
}
REQUEST = ElicitationRequest(server="s", message="Who are you?", requested_schema=SCHEMA)


def test_an_answer_is_checked_against_the_requested_schema() -> None:
    assert answer_problem(REQUEST, ElicitationAnswer("accept", {"name": "Ada"})) is None
    assert answer_problem(REQUEST, ElicitationAnswer("accept", {"count": 2})) == (
        "'name' is a required property"
    )
    assert answer_problem(REQUEST, ElicitationAnswer("accept", {"name": "A", "count": 0})) == (
        "count: 0 is less than the minimum of 1"
    )
    assert answer_problem(REQUEST, ElicitationAnswer("decline")) is None


def test_the_request_is_described_with_its_fields() -> None:
    assert REQUEST.describe() == (
        "MCP server s asks: Who are you?\n"
        "  name: string - Your name\n"
        "  count: integer (optional)\n"
        "  color: red|blue (optional)"
    )


@pytest.mark.anyio
async def test_what_goes_back_to_the_server() -> None:
    warnings: list[str] = []

    async def wrong(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("accept", {"name": 5})

    async def broken(request: ElicitationRequest) -> ElicitationAnswer:
        raise RuntimeError("the dialog crashed")

    async def good(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("accept", {"name": "Ada", "color": "red"})

    assert await settle_answer(REQUEST, None) == ElicitationAnswer("decline")
    assert await settle_answer(REQUEST, wrong, warnings.append) == ElicitationAnswer("decline")
    assert await settle_answer(REQUEST, broken, warnings.append) == ElicitationAnswer("cancel")
    assert await settle_answer(REQUEST, good) == ElicitationAnswer(
        "accept", {"name": "Ada", "color": "red"}
    )
    assert warnings == [
        "elicitation answer for s declined: name: 5 is not of type 'string'",
        "elicitation from s failed: the dialog crashed",
    ]


_missing = everything_available()


async def _elicit_once(handler: ElicitationHandler | None, warnings: list[str]) -> Any:
    config = McpServerConfig(command="node", args=(str(EVERYTHING_BIN), "stdio"), required=True)
    factory = StdioHttpClientFactory(elicitation=handler, on_warning=warnings.append)
    async with McpRuntime.open({"everything": config}, factory=factory) as runtime:
        await runtime.wait_for_required()
        binding = await runtime.binding_for_step()
        outcome = await binding.call("mcp__everything__trigger_elicitation_request", {})
    assert outcome.success
    blocks = json.loads(outcome.text)
    return json.loads(blocks[-1]["text"].split("Raw result: ", 1)[1])


@pytest.mark.skipif(_missing is not None, reason=_missing or "")
@pytest.mark.anyio
async def test_server_everything_gets_decline_for_a_wrong_answer_and_without_a_handler() -> None:
    asked: list[str] = []

    async def wrong(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request.describe().splitlines()[0])
        return ElicitationAnswer("accept", {"check": True})  # "name" is required

    warnings: list[str] = []
    assert await _elicit_once(wrong, warnings) == {"action": "decline"}
    assert asked == ["MCP server everything asks: Please provide inputs for the following fields:"]
    assert warnings == ["elicitation answer for everything declined: 'name' is a required property"]
    nobody: list[str] = []
    assert await _elicit_once(None, nobody) == {"action": "decline"}
    assert nobody == []
