"""Approvals through a real Session: one callback, session approvals shown to the model in the
``permissions`` section, every decision recorded in the rollout and visible in ``rollout
inspect``, an ``abort`` answer stopping the turn."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.config import Config
from mini_codex.host import Session, SessionOptions, open_options
from mini_codex.protocol import EventMsgLine, FunctionCallOutput, Message, message_text
from mini_codex.protocol.approvals import (
    ApprovalAnswer,
    ApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)
from mini_codex.protocol.events import TurnAborted
from mini_codex.rollout.reader import read_rollout
from mini_codex.sandbox.bwrap import SandboxAvailability
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant, function_call
from mini_codex.world_state.sections.permissions import unsandboxed_note

pytestmark = pytest.mark.anyio

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def shell(command: str, call_id: str) -> ScriptedResponse:
    return ScriptedResponse([function_call("shell", {"command": command}, call_id)])


async def run_session(
    tmp_path: Path, script: list[ScriptedResponse], answers: list[ApprovalAnswer]
) -> tuple[Session, ScriptedModel, list[ApprovalRequest]]:
    asked: list[ApprovalRequest] = []

    async def user(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return answers.pop(0)

    (tmp_path / "work").mkdir()
    (tmp_path / "home").mkdir()
    model = ScriptedModel(script)
    options = SessionOptions(
        cwd=tmp_path / "work",
        home=tmp_path / "home",
        client=model,
        config=Config(approval_policy="untrusted"),
        env=ENV,
        approval_callback=user,
    )
    async with open_options(options) as session:
        await session.run_turn("make two files")
    return session, model, asked


async def test_a_session_approval_is_reused_shown_to_the_model_and_recorded(
    tmp_path: Path,
) -> None:
    script = [
        shell("touch one", "call_1"),
        shell("touch one", "call_2"),
        ScriptedResponse([assistant("done")]),
    ]
    session, model, asked = await run_session(
        tmp_path, script, [ApprovalAnswer(decision="approved_for_session")]
    )
    assert [r.call_id for r in asked] == ["call_1"]
    # The step after the approval tells the model about the saved prefix.
    texts = [message_text(item) for item in model.prompts[1].input if isinstance(item, Message)]
    saved = [text for text in texts if "Approved command prefix saved" in text]
    assert saved == ['Approved command prefix saved:\n- ["touch", "one"]']
    assert session.rollout_path is not None
    lines = read_rollout(session.rollout_path).lines
    safety = [
        (line.payload.call_id, line.payload.source, line.payload.decision)
        for line in lines
        if isinstance(line, EventMsgLine) and isinstance(line.payload, SafetyDecision)
    ]
    assert safety == [
        ("call_1", "policy", "ask"),
        ("call_1", "user", "approved_for_session"),
        ("call_2", "user", "run"),
    ]
    requests = [
        line.payload
        for line in lines
        if isinstance(line, EventMsgLine) and isinstance(line.payload, ExecApprovalRequest)
    ]
    assert [r.call_id for r in requests] == ["call_1"]
    inspected = CliRunner().invoke(
        app, ["rollout", "inspect", str(session.rollout_path)], env={"COLUMNS": "200"}
    )
    assert inspected.exit_code == 0, inspected.output
    text = inspected.output
    assert "safety_decision" in text
    assert "exec_approval_request" in text
    assert "user → approved_for_session" in text


async def test_abort_stops_the_turn(tmp_path: Path) -> None:
    script = [shell("touch nope", "call_1"), ScriptedResponse([assistant("unused")])]
    session, _model, asked = await run_session(tmp_path, script, [ApprovalAnswer(decision="abort")])
    assert len(asked) == 1
    assert not (tmp_path / "work" / "nope").exists()
    assert session.rollout_path is not None
    lines = read_rollout(session.rollout_path).lines
    assert any(
        isinstance(line, EventMsgLine) and isinstance(line.payload, TurnAborted) for line in lines
    )
    outputs = [line.payload for line in lines if isinstance(line.payload, FunctionCallOutput)]
    assert [o.output for o in outputs] == ["The user denied this command and stopped the turn."]


@pytest.mark.parametrize("allowed", [False, True])
async def test_without_any_sandbox_the_permissions_text_says_so(
    tmp_path: Path, allowed: bool
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "home").mkdir()
    model = ScriptedModel([shell("touch made", "call_1"), ScriptedResponse([assistant("ok")])])
    config = Config.model_validate({"sandbox": {"allow_unsandboxed": allowed}})
    options = SessionOptions(
        cwd=tmp_path / "work", home=tmp_path / "home", client=model, config=config, env=ENV
    )
    async with open_options(options) as session:
        session.caches.sandbox = SandboxAvailability(kind="none", reason="test: no sandbox")
        await session.run_turn("make a file")
    permissions = message_text(model.prompts[0].input[0])
    expected = unsandboxed_note("test: no sandbox", allowed=allowed)
    assert expected in permissions
    assert ("WITHOUT a sandbox" in expected) is allowed
    outputs = [i for i in model.prompts[1].input if isinstance(i, FunctionCallOutput)]
    assert (tmp_path / "work" / "made").exists() is allowed
    assert outputs[0].output.startswith("Exit code: 0" if allowed else "refused to run:")


async def test_session_approvals_survive_a_resume(tmp_path: Path) -> None:
    script = [shell("touch one", "call_1"), ScriptedResponse([assistant("done")])]
    session, _model, asked = await run_session(
        tmp_path, script, [ApprovalAnswer(decision="approved_for_session")]
    )
    assert len(asked) == 1
    assert session.rollout_path is not None
    model = ScriptedModel([shell("touch one", "call_2"), ScriptedResponse([assistant("ok")])])
    options = SessionOptions(
        cwd=tmp_path / "work",
        home=tmp_path / "home",
        client=model,
        config=Config(approval_policy="untrusted"),
        env=ENV,
        resume_path=session.rollout_path,
    )
    async with open_options(options) as resumed:
        assert resumed.approvals.session_prefixes() == [("touch", "one")]
        await resumed.run_turn("again")
    outputs = [i for i in model.prompts[1].input if isinstance(i, FunctionCallOutput)]
    assert outputs[-1].output.startswith("Exit code: 0")
