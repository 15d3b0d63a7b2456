"""The app-server's elicitation handler over a real ``Connection`` (in process): the params it
sends, and what a disconnect, an error answer and an answer give back."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mini_codex.app_server.elicitation import client_elicitation_callback, request_params
from mini_codex.app_server.rpc import Connection, Incoming
from mini_codex.mcp.elicitation import ElicitationAnswer, ElicitationRequest

FORM = ElicitationRequest(
    server="s",
    message="Who?",
    requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
)
URL = ElicitationRequest(
    server="s", message="Log in", mode="url", url="https://x.test/a", elicitation_id="e1"
)


def test_the_params_of_a_form_and_a_url_request() -> None:
    assert request_params(FORM, "t", "u") == {
        "threadId": "t",
        "turnId": "u",
        "serverName": "s",
        "mode": "form",
        "_meta": None,
        "message": "Who?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    assert request_params(URL, "t", None) == {
        "threadId": "t",
        "turnId": None,
        "serverName": "s",
        "mode": "url",
        "_meta": None,
        "elicitationId": "e1",
        "message": "Log in",
        "url": "https://x.test/a",
    }


async def _ask(settle: Any, *, asks: bool = True) -> tuple[ElicitationAnswer, list[Any], list[Any]]:
    """Ask once; ``settle(connection, request_id)`` plays the client once the request is out."""
    written: list[Any] = []
    flags: list[bool] = []
    warnings: list[str] = []
    sent = anyio.Event()

    async def write(data: bytes) -> None:
        for line in data.splitlines():
            written.append(json.loads(line))
            if "id" in written[-1] and "method" in written[-1]:
                sent.set()

    connection = Connection(write)
    ask = client_elicitation_callback(
        connection,
        thread_id=lambda: "t",
        turn_id=lambda: "u",
        asks=lambda: asks,
        waiting=flags.append,
        on_warning=warnings.append,
    )
    answers: list[ElicitationAnswer] = []
    answered = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.run_writer)

        async def run() -> None:
            answers.append(await ask(FORM))
            answered.set()

        tg.start_soon(run)
        if asks:
            with anyio.fail_after(5):
                await sent.wait()
            settle(connection, written[-1]["id"])
        with anyio.fail_after(5):
            await answered.wait()
        connection.close()
    return answers[0], written, [flags, warnings]


@pytest.mark.anyio
async def test_a_disconnect_declines_and_resolves_the_request() -> None:
    answer, written, (flags, warnings) = await _ask(lambda c, _id: c.client_gone())
    assert answer == ElicitationAnswer.decline()
    assert [m.get("method") for m in written] == [
        "mcpServer/elicitation/request",
        "serverRequest/resolved",
    ]
    assert written[1]["params"] == {"threadId": "t", "requestId": written[0]["id"]}
    assert flags == [True, False]
    assert warnings == []


@pytest.mark.anyio
async def test_an_error_answer_declines_with_a_warning() -> None:
    def error(connection: Connection, request_id: Any) -> None:
        connection.deliver(
            Incoming(kind="response", id=request_id, error={"code": 1, "message": "no"})
        )

    answer, _, (_, warnings) = await _ask(error)
    assert answer == ElicitationAnswer.decline()
    assert warnings == ["elicitation from s declined: the client answered error 1: no"]


@pytest.mark.anyio
async def test_an_accept_is_passed_on_and_never_asks_nobody() -> None:
    def accept(connection: Connection, request_id: Any) -> None:
        result = {"action": "accept", "content": {"name": "Ada"}}
        connection.deliver(Incoming(kind="response", id=request_id, result=result))

    answer, _, _ = await _ask(accept)
    assert answer == ElicitationAnswer("accept", {"name": "Ada"})
    answer, written, (flags, _) = await _ask(None, asks=False)
    assert (answer, written, flags) == (ElicitationAnswer.decline(), [], [])
