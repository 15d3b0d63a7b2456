"""The terminal approval prompt of ``exec``: one key per answer, re-asked on anything else."""

from __future__ import annotations

import io

import pytest

from mini_codex.cli.approval_prompt import proposed_prefix, terminal_callback
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ApprovalAnswer,
    ExecApprovalRequest,
)

pytestmark = pytest.mark.anyio

REQUEST = ExecApprovalRequest(
    call_id="c", command=["/bin/bash", "-lc", "git push origin main"], cwd="/w", reason="r"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("keys", "answer"),
    [
        (["y\n"], ApprovalAnswer(decision="approved")),
        (["a\n"], ApprovalAnswer(decision="approved_for_session")),
        (["?\n", "p\n"], ApprovalAnswer(decision="approved_for_session", prefix=["git", "push"])),
        (["n\n"], ApprovalAnswer(decision="denied")),
        (["s\n"], ApprovalAnswer(decision="abort")),
        ([""], ApprovalAnswer(decision="denied", reason="the terminal closed")),
    ],
)
async def test_keys(keys: list[str], answer: ApprovalAnswer) -> None:
    err = io.StringIO()
    ask = terminal_callback(interactive=True, err=err, read_line=lambda: keys.pop(0))
    assert await ask(REQUEST) == answer
    assert "Run: /bin/bash -lc 'git push origin main'\n  in /w\n  reason: r\n" in err.getvalue()
    assert "[p] always git push …" in err.getvalue()


async def test_without_a_terminal_every_request_is_denied_with_a_line() -> None:
    err = io.StringIO()
    deny = terminal_callback(interactive=False, err=err)
    patch = ApplyPatchApprovalRequest(call_id="c", changes={"/etc/x": "add"})
    answer = await deny(patch)
    assert answer == ApprovalAnswer(
        decision="denied", reason="no terminal to ask the user on; exec denies approval requests"
    )
    assert err.getvalue() == (
        "mini-codex: approval needed, denied (no terminal on stdin): Apply patch: add /etc/x\n"
    )


def test_the_proposed_prefix_is_program_and_subcommand() -> None:
    assert proposed_prefix(["bash", "-lc", "git push x"]) == ["git", "push"]
    assert proposed_prefix(["ls", "-la"]) == ["ls"]
