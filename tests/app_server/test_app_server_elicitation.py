"""MCP elicitation through ``mini-codex app-server``: server-everything's
``trigger-elicitation-request`` becomes an ``mcpServer/elicitation/request`` to the client, whose
answer (accept with content, decline, cancel; a JSON-RPC error or a disconnect declines) goes back
to the MCP server after the schema check. Compared with what the real Codex app-server sent in
``tests/fixtures/app_server/codex-0.169.0-elicitation.json`` (how: the README there) and, when
the Codex CLI is installed, with a live run of it."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_server_flow import REPO, codex_available, codex_side, fake, mini_side
from app_server_schema import check_all
from elicitation_flow import (
    ERROR,
    EVERYTHING,
    VALID,
    ElicitationResult,
    add_everything,
    elicitation_replies,
    normalized,
    run_elicitation,
)

from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import check_rollout

FIXTURE = REPO / "tests" / "fixtures" / "app_server" / "codex-0.169.0-elicitation.json"
ACCEPT = {"action": "accept", "content": VALID}
DECLINE = {"action": "decline"}
INVALID = {"action": "accept", "content": {"check": True}}  # "name" is required

pytestmark = pytest.mark.skipif(
    not EVERYTHING.exists() or shutil.which("node") is None,
    reason="mcp-server-everything is not installed (npm ci)",
)


def _codex_turns() -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["turns"]
    return turns


def texts(output: Any) -> list[str]:
    """The MCP result's text blocks of a function_call_output: ours is the JSON of the content
    blocks, Codex's a list of ``input_text`` items after a ``Wall time`` line."""
    if isinstance(output, str):
        return [block["text"] for block in json.loads(output)]
    return [part["text"] for part in output if not part["text"].startswith("Wall time:")]


def methods(messages: list[dict[str, Any]]) -> list[str]:
    return [m["method"] for m in messages]


def _mini(tmp_path: Path, answers: list[Any], policy: str = "on-request") -> ElicitationResult:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return run_elicitation(
        lambda url: mini_side(tmp_path / "home", url), work, answers, policy=policy
    )


def test_accept_decline_an_invalid_answer_and_an_error_answer(tmp_path: Path) -> None:
    result = _mini(tmp_path, [ACCEPT, DECLINE, INVALID, ERROR])
    assert check_all(result.messages, result.methods) == []
    assert result.turns == ["completed"] * 4
    codex = _codex_turns()
    work = tmp_path / "work"
    ours = [normalized(around, result.thread_id, work) for around in result.around]
    # The request, its resolution and the thread status around it, as Codex sends them.
    for k in range(3):
        assert ours[k][1:5] == codex[k]["messages"][1:5], f"turn {k + 1}"
    asked = [message for message in result.asked if message is not None]
    assert [message["id"] for message in asked] == [0, 1, 2, 3]
    assert asked[3]["params"] == asked[0]["params"] | {"turnId": asked[3]["params"]["turnId"]}
    assert methods(ours[0]) == methods(codex[0]["messages"])
    assert methods(ours[1]) == methods(codex[1]["messages"])
    resolved = ["serverRequest/resolved", "thread/status/changed"]
    assert methods(ours[2])[3:] == [*resolved, "warning", "item/completed"]
    assert methods(ours[3])[3:] == ["warning", *resolved, "item/completed"]
    # What the MCP server got back, as the model sees it: Codex's for accept and decline; the
    # answer that misses "name" and the error answer are declined (Codex forwards the former).
    assert texts(result.outputs["call_1"]) == texts(codex[0]["output"])
    assert texts(result.outputs["call_2"]) == texts(codex[1]["output"])
    assert texts(result.outputs["call_3"]) == texts(codex[1]["output"])
    assert texts(result.outputs["call_4"]) == texts(codex[1]["output"])
    assert texts(codex[2]["output"])[0] == "✅ User provided the requested information!"
    assert result.warnings == [
        "elicitation answer for everything declined: 'name' is a required property",
        "elicitation from everything declined: the client answered error -32000: "
        "the user closed the dialog",
    ]
    assert result.rollout is not None
    rollout = read_rollout(Path(result.rollout))
    assert check_rollout(rollout.lines, line_numbers=rollout.line_numbers).violations == []


def test_cancel_and_odd_answers(tmp_path: Path) -> None:
    cancel = {"action": "cancel"}
    odd = {"action": "maybe"}
    not_object = {"action": "accept", "content": "Ada"}
    result = _mini(tmp_path, [cancel, odd, not_object])
    assert check_all(result.messages, result.methods) == []
    assert [texts(result.outputs[f"call_{k}"])[0] for k in (1, 2, 3)] == [
        "⚠️ User cancelled the elicitation dialog.",
        "❌ User declined to provide the requested information.",
        "❌ User declined to provide the requested information.",
    ]
    assert result.warnings == [
        "elicitation from everything declined: the client answered an unknown action 'maybe'",
        "elicitation from everything declined: the client's content is str, not an object",
    ]


def test_approval_policy_never_declines_without_asking(tmp_path: Path) -> None:
    result = _mini(tmp_path, [None], policy="never")
    assert result.asked == [None]
    assert texts(result.outputs["call_1"]) == texts(_codex_turns()[1]["output"])
    assert "mcpServer/elicitation/request" not in methods(
        [m for m in result.messages if "method" in m]
    )


def test_a_client_that_disconnects_while_asked_ends_the_turn_cleanly(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with fake.serve(elicitation_replies(1)) as server:
        side = mini_side(tmp_path / "home", server.url)
        add_everything(side)
        client = side.start()
        client.initialize()
        thread = client.request(
            "thread/start",
            {"cwd": str(work), "sandbox": "danger-full-access", "approvalPolicy": "on-request"},
            timeout=90,
        )["thread"]
        client.request(
            "turn/start", {"threadId": thread["id"], "input": [{"type": "text", "text": "go"}]}
        )
        client.wait_method("mcpServer/elicitation/request", timeout=90)
        assert client.close(timeout=30) == 0
    rollout = read_rollout(Path(thread["path"]))
    assert check_rollout(rollout.lines, line_numbers=rollout.line_numbers).violations == []
    # The question was declined (``test_elicitation_callback.py``) and, the client gone, the
    # server interrupted the turn: the call is recorded as aborted, the rollout stays valid.
    payloads = [line.model_dump(mode="json")["payload"] for line in rollout.lines]
    output = next(p for p in payloads if p.get("type") == "function_call_output")
    assert output["call_id"] == "call_1"
    assert output["output"].startswith("aborted by user")
    assert payloads[-1]["type"] == "turn_aborted"


@pytest.fixture
def codex_dir() -> Iterator[Path]:
    path = REPO / ".pytest-codex" / uuid.uuid4().hex
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_real_codex_app_server_asks_the_same(codex_dir: Path, tmp_path: Path) -> None:
    if not codex_available():
        pytest.skip("the Codex CLI is not installed (npm ci)")
    work = codex_dir / "work"
    work.mkdir()
    answers: list[Any] = [ACCEPT, DECLINE]
    codex = run_elicitation(lambda url: codex_side(codex_dir / "home", url), work, answers)
    ours = _mini(tmp_path, [ACCEPT, DECLINE])
    assert check_all(codex.messages, codex.methods) == []
    assert check_all(ours.messages, ours.methods) == []
    theirs = [normalized(around, codex.thread_id, work) for around in codex.around]
    mine = [normalized(around, ours.thread_id, tmp_path / "work") for around in ours.around]
    for k in range(2):
        assert mine[k][1:5] == theirs[k][1:5]
        assert methods(mine[k]) == methods(theirs[k])
        call = f"call_{k + 1}"
        assert texts(ours.outputs[call]) == texts(codex.outputs[call])
    never = codex_dir / "never"
    never.mkdir()
    declined = run_elicitation(
        lambda url: codex_side(codex_dir / "home-never", url), never, [None], policy="never"
    )
    assert declined.asked == [None]
    assert texts(declined.outputs["call_1"]) == texts(codex.outputs["call_2"])
