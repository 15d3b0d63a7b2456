"""Approvals as server requests: the session's approval callback asks the client.

The approval *policy* stays where it is (``policy/approval.py`` decides whether to ask; the runtime
persists the request and the answer); this module only carries the question over JSON-RPC:
``item/commandExecution/requestApproval`` or ``item/fileChange/requestApproval`` with the item id
(the call id), awaited; then ``serverRequest/resolved``. The thread shows
``active {activeFlags: ["waitingOnApproval"]}`` meanwhile.

Decisions: ``accept`` → approved once, ``acceptForSession`` → approved for the session (an
``acceptWithExecpolicyAmendment`` approves its prefix for the session), ``decline`` → denied (the
model is told), ``cancel`` → denied and the turn stops. A client that disconnects while asked, or
answers with an error or an unknown decision, is a denial.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mini_codex.app_server.items import command_text
from mini_codex.app_server.rpc import ClientGone, Connection, RpcError
from mini_codex.policy.approval import commands_of
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ApprovalAnswer,
    ApprovalRequest,
    ExecApprovalRequest,
)
from mini_codex.runtime.approvals import ApprovalCallback

__all__ = ["answer_of", "client_approval_callback"]

JsonDict = dict[str, Any]


def answer_of(result: Any) -> ApprovalAnswer:
    """Our answer for the client's ``{decision}``."""
    decision = result.get("decision") if isinstance(result, dict) else None
    match decision:
        case "accept":
            return ApprovalAnswer(decision="approved")
        case "acceptForSession":
            return ApprovalAnswer(decision="approved_for_session")
        case "decline":
            return ApprovalAnswer(decision="denied", reason="declined by the user")
        case "cancel":
            return ApprovalAnswer(decision="abort", reason="cancelled by the user")
        case {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": list(prefix)}}:
            return ApprovalAnswer(
                decision="approved_for_session", prefix=[str(part) for part in prefix]
            )
        case _:
            return ApprovalAnswer(decision="denied", reason=f"unknown decision {decision!r}")


def _params(
    request: ApprovalRequest, thread_id: str, turn_id: str, cwd: str
) -> tuple[str, JsonDict]:
    base: JsonDict = {
        "threadId": thread_id,
        "turnId": turn_id,
        "itemId": request.call_id,
        "startedAtMs": int(time.time() * 1000),
        "reason": request.reason,
    }
    if isinstance(request, ExecApprovalRequest):
        commands = commands_of(request.command)
        shown = command_text(request.command)
        actions = [{"type": "unknown", "command": command_text(c)} for c in commands] or [
            {"type": "unknown", "command": shown}
        ]
        params = {
            **base,
            "command": shown,
            "cwd": request.cwd or cwd,
            "commandActions": actions,
            "availableDecisions": ["accept", "acceptForSession", "decline", "cancel"],
        }
        return "item/commandExecution/requestApproval", params
    assert isinstance(request, ApplyPatchApprovalRequest)
    return "item/fileChange/requestApproval", base


def client_approval_callback(
    connection: Connection,
    *,
    thread_id: Callable[[], str],
    turn_id: Callable[[], str],
    cwd: Callable[[], str],
    waiting: Callable[[bool], None],
) -> ApprovalCallback:
    """The session's approval callback for one thread; ``waiting(True/False)`` brackets it."""

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        method, params = _params(request, thread_id(), turn_id(), cwd())
        request_id = connection.next_request_id()
        waiting(True)
        try:
            result = await connection.request(method, params)
        except ClientGone:
            return ApprovalAnswer(decision="denied", reason="the client disconnected")
        except RpcError as exc:
            return ApprovalAnswer(decision="denied", reason=f"the client answered {exc}")
        finally:
            waiting(False)
            connection.notify(
                "serverRequest/resolved", {"threadId": thread_id(), "requestId": request_id}
            )
        return answer_of(result)

    return ask
