"""The shell tool under every approval policy × (safe command, unsafe command, escalation
request, sandbox denial), with real processes under bubblewrap; the user is a scripted callback
answering through the real ``SessionApprovals``; session-scoped approvals are reused."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pytest

from mini_codex.context import ContextManager
from mini_codex.protocol.approvals import (
    ApprovalAnswer,
    ApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import SessionApprovals
from mini_codex.runtime.recording import Recording
from mini_codex.sandbox.bwrap import SandboxAvailability, detect_bwrap
from mini_codex.tools.base import ToolContext, ToolOutput
from mini_codex.tools.shell import ShellTool

pytestmark = pytest.mark.anyio

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def bwrap() -> SandboxAvailability:
    found = await detect_bwrap(search_path=ENV["PATH"])
    if found.kind != "bwrap":
        pytest.skip(f"bubblewrap does not work here: {found.reason}")
    return found


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="mini-codex-approvals-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class User:
    """Answers every request with the next scripted answer, and logs what it was asked."""

    answers: list[ApprovalAnswer]
    asked: list[ApprovalRequest] = field(default_factory=list)

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        return self.answers.pop(0)


@dataclass
class Harness:
    tool: ShellTool
    approvals: SessionApprovals
    user: User
    events: list[SessionEvent]
    ctx: ToolContext

    async def shell(self, command: str, **args: object) -> ToolOutput:
        return await self.tool.call(json.dumps({"command": command, **args}), self.ctx)

    def decisions(self) -> list[tuple[str, str]]:
        return [(e.source, e.decision) for e in self.events if isinstance(e, SafetyDecision)]


def harness(
    tmp_path: Path,
    backend: SandboxAvailability,
    approval: ApprovalPolicy,
    answers: list[ApprovalAnswer],
    policy: SandboxPolicy | None = None,
) -> Harness:
    events: list[SessionEvent] = []
    user = User(list(answers))
    approvals = SessionApprovals(Recording(ContextManager(), None, events.append), callback=user)
    ctx = ToolContext(
        cwd=tmp_path,
        sandbox=policy or SandboxPolicy.workspace_write(),
        call_id="c1",
        turn_id="t1",
        step_id="s1",
        env=ENV,
        sandbox_backend=backend,
        approval_policy=approval,
        approvals=approvals,
    )
    return Harness(ShellTool(), approvals, user, events, ctx)


YES = ApprovalAnswer(decision="approved")
NO = ApprovalAnswer(decision="denied")
POLICIES: list[ApprovalPolicy] = ["untrusted", "on-failure", "on-request", "never"]


@pytest.mark.parametrize("approval", POLICIES)
async def test_a_known_safe_command_never_asks(
    tmp_path: Path, bwrap: SandboxAvailability, approval: ApprovalPolicy
) -> None:
    h = harness(tmp_path, bwrap, approval, [])
    result = await h.shell("ls && pwd")
    assert result.success is True
    assert h.user.asked == []
    assert h.decisions() == [("policy", "run")]


@pytest.mark.parametrize(
    ("approval", "asked", "decisions"),
    [
        ("untrusted", 1, [("policy", "ask"), ("user", "approved")]),
        ("on-failure", 0, [("policy", "run")]),
        ("on-request", 0, [("policy", "run")]),
        ("never", 0, [("policy", "run")]),
    ],
)
async def test_an_unsafe_command(
    tmp_path: Path,
    bwrap: SandboxAvailability,
    approval: ApprovalPolicy,
    asked: int,
    decisions: list[tuple[str, str]],
) -> None:
    h = harness(tmp_path, bwrap, approval, [YES])
    result = await h.shell("touch made")
    assert result.success is True
    assert (tmp_path / "made").exists()
    assert len(h.user.asked) == asked
    assert h.decisions() == decisions


@pytest.mark.parametrize("approval", POLICIES)
async def test_an_escalation_request(
    tmp_path: Path, bwrap: SandboxAvailability, outside: Path, approval: ApprovalPolicy
) -> None:
    h = harness(tmp_path, bwrap, approval, [YES])
    result = await h.shell(
        f"touch {outside}/escalated",
        sandbox_permissions="require_escalated",
        justification="needs to write outside",
    )
    if approval == "on-request":
        assert result.success is True
        assert (outside / "escalated").exists()
        (request,) = h.user.asked
        assert isinstance(request, ExecApprovalRequest)
        assert (request.escalated, request.reason) == (True, "needs to write outside")
        assert h.decisions() == [("policy", "ask"), ("user", "approved")]
    else:
        assert result == ToolOutput(
            f"Command rejected: approval policy is {approval}; escalated permissions can only "
            "be requested under on-request. Run the command within the sandbox instead.",
            False,
        )
        assert not (outside / "escalated").exists()
        assert h.user.asked == []
        assert h.decisions() == [("policy", "reject")]


@pytest.mark.parametrize(
    ("approval", "answers", "created", "decisions"),
    [
        (
            "untrusted",
            [YES],
            False,
            [("policy", "ask"), ("user", "approved"), ("sandbox", "sandbox_denied")],
        ),
        (
            "on-failure",
            [YES],
            True,
            [("policy", "run"), ("sandbox", "sandbox_denied"), ("user", "approved")],
        ),
        ("on-failure", [NO], False, [("policy", "run"), ("sandbox", "sandbox_denied"),
                                      ("user", "denied")]),
        ("on-request", [], False, [("policy", "run"), ("sandbox", "sandbox_denied")]),
        ("never", [], False, [("policy", "run"), ("sandbox", "sandbox_denied")]),
    ],
)  # fmt: skip
async def test_a_sandbox_denial(
    tmp_path: Path,
    bwrap: SandboxAvailability,
    outside: Path,
    approval: ApprovalPolicy,
    answers: list[ApprovalAnswer],
    created: bool,
    decisions: list[tuple[str, str]],
) -> None:
    h = harness(tmp_path, bwrap, approval, answers)
    result = await h.shell(f"touch {outside}/denied")
    assert (outside / "denied").exists() is created
    assert result.success is created
    assert h.decisions() == decisions
    assert h.user.answers == []


async def test_session_approvals_are_reused_exact_and_by_prefix(
    tmp_path: Path, bwrap: SandboxAvailability
) -> None:
    h = harness(
        tmp_path,
        bwrap,
        "untrusted",
        [
            ApprovalAnswer(decision="approved_for_session"),
            ApprovalAnswer(decision="approved_for_session", prefix=["mkdir", "-p"]),
            NO,
        ],
    )
    for command in ("touch a", "touch a", "mkdir -p x/y", "mkdir -p z", "touch b"):
        result = await h.shell(command)
        if command != "touch b":
            assert result.success is True, result.text
    assert [r.command[-1] for r in h.user.asked if isinstance(r, ExecApprovalRequest)] == [
        "touch a",
        "mkdir -p x/y",
        "touch b",
    ]
    assert h.approvals.session_prefixes() == [("touch", "a"), ("mkdir", "-p")]
    assert (tmp_path / "x" / "y").is_dir()
    assert (tmp_path / "z").is_dir()


async def test_abort_denies_and_asks_the_runtime_to_stop_the_turn(
    tmp_path: Path, bwrap: SandboxAvailability
) -> None:
    stopped: list[bool] = []
    h = harness(tmp_path, bwrap, "untrusted", [ApprovalAnswer(decision="abort")])
    h.approvals = SessionApprovals(
        Recording(ContextManager(), None, h.events.append),
        callback=h.user,
        on_abort=lambda: stopped.append(True),
    )
    h.ctx = msgspec.structs.replace(h.ctx, approvals=h.approvals)
    result = await h.shell("touch nope")
    assert result == ToolOutput("The user denied this command and stopped the turn.", False)
    assert stopped == [True]
    assert not (tmp_path / "nope").exists()


async def test_no_one_to_ask_denies(tmp_path: Path, bwrap: SandboxAvailability) -> None:
    h = harness(tmp_path, bwrap, "untrusted", [])
    h.approvals = SessionApprovals(Recording(ContextManager(), None, h.events.append))
    h.ctx = msgspec.structs.replace(h.ctx, approvals=h.approvals)
    result = await h.shell("touch nope")
    assert result == ToolOutput(
        "The user denied this command (no approval callback). Do not run it again; find "
        "another way or stop.",
        False,
    )
    assert not (tmp_path / "nope").exists()
