"""The approval callback of ``mini-codex exec``: ask on the terminal, or deny without one.

* stdin is a terminal: the request is shown on stderr and answered with one key — ``y`` approve
  once, ``a`` approve this exact command for the session, ``p`` approve its prefix for the session
  (the program and its subcommand), ``n`` deny, ``s`` deny and stop the turn.
* no terminal (pipes, CI): every request is denied, with a line on stderr and a reason the model
  reads ("no terminal to ask on").

The interactive UI (a later front end) passes its own callback to the same ``Session`` option.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from typing import TextIO

import anyio

from mini_codex.policy.approval import commands_of
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ApprovalAnswer,
    ApprovalRequest,
    ExecApprovalRequest,
)
from mini_codex.runtime.approvals import ApprovalCallback

__all__ = ["NO_TERMINAL_REASON", "describe", "proposed_prefix", "terminal_callback"]

NO_TERMINAL_REASON = "no terminal to ask the user on; exec denies approval requests"


def proposed_prefix(command: list[str]) -> list[str]:
    """The prefix ``p`` approves: the first plain command's program and its subcommand."""
    first = commands_of(command)[0]
    if len(first) > 1 and not first[1].startswith("-"):
        return first[:2]
    return first[:1]


def describe(request: ApprovalRequest) -> str:
    match request:
        case ExecApprovalRequest():
            where = " (outside the sandbox)" if request.escalated else ""
            text = f"Run{where}: {shlex.join(request.command)}\n  in {request.cwd}"
        case ApplyPatchApprovalRequest():
            files = ", ".join(f"{kind} {path}" for path, kind in request.changes.items())
            text = f"Apply patch: {files}"
    if request.reason:
        text += f"\n  reason: {request.reason}"
    return text


def _answer(key: str, request: ApprovalRequest) -> ApprovalAnswer | None:
    match key.strip().lower():
        case "y":
            return ApprovalAnswer(decision="approved")
        case "a":
            return ApprovalAnswer(decision="approved_for_session")
        case "p" if isinstance(request, ExecApprovalRequest):
            return ApprovalAnswer(
                decision="approved_for_session", prefix=proposed_prefix(request.command)
            )
        case "n" | "":
            return ApprovalAnswer(decision="denied")
        case "s":
            return ApprovalAnswer(decision="abort")
        case _:
            return None


def terminal_callback(
    *,
    interactive: bool,
    err: TextIO | None = None,
    read_line: Callable[[], str] | None = None,
) -> ApprovalCallback:
    """The callback for ``exec``: ``interactive`` when stdin is a terminal."""
    stream = err or sys.stderr
    reader = read_line or sys.stdin.readline

    async def no_terminal(request: ApprovalRequest) -> ApprovalAnswer:
        first = describe(request).splitlines()[0]
        stream.write(f"mini-codex: approval needed, denied (no terminal on stdin): {first}\n")
        stream.flush()
        return ApprovalAnswer(decision="denied", reason=NO_TERMINAL_REASON)

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        options = "[y] yes  [a] always (this command)  "
        if isinstance(request, ExecApprovalRequest):
            options += f"[p] always {shlex.join(proposed_prefix(request.command))} …  "
        options += "[n] no  [s] no, and stop"
        while True:
            stream.write(f"\n{describe(request)}\n{options}? ")
            stream.flush()
            line = await anyio.to_thread.run_sync(reader)
            if line == "":  # end of input: nobody can answer
                return ApprovalAnswer(decision="denied", reason="the terminal closed")
            answer = _answer(line, request)
            if answer is not None:
                return answer

    return ask if interactive else no_terminal
