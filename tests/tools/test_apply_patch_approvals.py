"""apply_patch under each approval policy: inside or outside the writable roots."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_codex.context import ContextManager
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ApprovalAnswer,
    ApprovalRequest,
    SafetyDecision,
)
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import SessionApprovals
from mini_codex.runtime.recording import Recording
from mini_codex.tools.apply_patch import ApplyPatchTool
from mini_codex.tools.base import ToolContext, ToolOutput

pytestmark = pytest.mark.anyio

EVENTS: list[SessionEvent] = []


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="mini-codex-patch-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def apply(
    cwd: Path, approval: ApprovalPolicy, target: str, answer: str | None
) -> tuple[ToolOutput, list[ApprovalRequest]]:
    asked: list[ApprovalRequest] = []

    async def user(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        assert answer is not None, "asked unexpectedly"
        return ApprovalAnswer(decision=answer)  # type: ignore[arg-type]

    approvals = SessionApprovals(Recording(ContextManager(), None, EVENTS.append), callback=user)
    ctx = ToolContext(
        cwd=cwd,
        sandbox=SandboxPolicy.workspace_write(),
        call_id="c",
        turn_id="t",
        step_id="s",
        approval_policy=approval,
        approvals=approvals,
    )
    patch = f"*** Begin Patch\n*** Add File: {target}\n+x\n*** End Patch"
    return await ApplyPatchTool(freeform=True).call(patch, ctx), asked


@pytest.mark.parametrize(
    ("approval", "answer", "applied", "asks"),
    [
        ("untrusted", "approved", True, 1),
        ("untrusted", "denied", False, 1),
        ("on-failure", None, True, 0),
        ("on-request", None, True, 0),
        ("never", None, True, 0),
    ],
)
async def test_inside_the_roots(
    tmp_path: Path, approval: ApprovalPolicy, answer: str | None, applied: bool, asks: int
) -> None:
    EVENTS.clear()
    result, asked = await apply(tmp_path, approval, "inside.txt", answer)
    decisions = [(e.source, e.decision) for e in EVENTS if isinstance(e, SafetyDecision)]
    assert decisions == ([("policy", "ask"), ("user", answer)] if asks else [("policy", "run")])
    assert result.success is applied
    assert (tmp_path / "inside.txt").exists() is applied
    assert len(asked) == asks
    assert all(isinstance(r, ApplyPatchApprovalRequest) for r in asked)


@pytest.mark.parametrize(
    ("approval", "answer", "applied", "asks"),
    [
        ("untrusted", "approved", True, 1),
        ("untrusted", "denied", False, 1),
        ("on-failure", "approved", True, 1),
        ("on-request", "approved", True, 1),
        ("on-request", "denied", False, 1),
        ("never", None, False, 0),
    ],
)
async def test_outside_the_roots(
    tmp_path: Path,
    outside: Path,
    approval: ApprovalPolicy,
    answer: str | None,
    applied: bool,
    asks: int,
) -> None:
    result, asked = await apply(tmp_path, approval, f"{outside}/out.txt", answer)
    assert result.success is applied
    assert (outside / "out.txt").exists() is applied
    assert len(asked) == asks
    if asked:
        assert asked[-1] == ApplyPatchApprovalRequest(
            call_id="c",
            turn_id="t",
            changes={f"{outside}/out.txt": "add"},
            reason=(
                "the patch writes outside the writable roots: absolute paths are not allowed: "
                f"'{outside}/out.txt'; use a path relative to {tmp_path}"
            ),
        )
