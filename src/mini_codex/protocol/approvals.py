"""Approval requests, answers and safety decisions (persisted as ``event_msg`` lines).

* ``ExecApprovalRequest`` / ``ApplyPatchApprovalRequest``: the user is asked (Codex's event names).
* ``ApprovalAnswer``: the answer of the one approval callback — ``approved`` (once),
  ``approved_for_session`` (the exact argv, or ``prefix`` when given), ``denied``, or ``abort``
  (deny and stop the turn).
* ``SafetyDecision``: every decision taken about a call — by the ``policy``, a ``rule``, the
  ``user`` or the ``sandbox`` (a denial) — so a rollout shows why each command ran or did not.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from mini_codex.protocol._base import WireModel

__all__ = [
    "ApplyPatchApprovalRequest",
    "ApprovalAnswer",
    "ApprovalRequest",
    "ExecApprovalRequest",
    "ReviewDecision",
    "SafetyDecision",
]

ReviewDecision: TypeAlias = Literal["approved", "approved_for_session", "denied", "abort"]


class ExecApprovalRequest(WireModel):
    type: Literal["exec_approval_request"] = "exec_approval_request"
    call_id: str
    turn_id: str | None = None
    command: list[str]
    cwd: str
    reason: str | None = None
    escalated: bool = False
    """Whether approving runs the command outside the sandbox."""


class ApplyPatchApprovalRequest(WireModel):
    type: Literal["apply_patch_approval_request"] = "apply_patch_approval_request"
    call_id: str
    turn_id: str | None = None
    changes: dict[str, str]
    """Path → ``add`` | ``update`` | ``delete``."""
    reason: str | None = None


ApprovalRequest: TypeAlias = ExecApprovalRequest | ApplyPatchApprovalRequest


class ApprovalAnswer(WireModel):
    decision: ReviewDecision
    prefix: list[str] | None = None
    """With ``approved_for_session``: approve every command starting with this prefix."""
    reason: str | None = None
    """Why (shown to the model with a denial, e.g. "no terminal to ask on")."""


class SafetyDecision(WireModel):
    type: Literal["safety_decision"] = "safety_decision"
    call_id: str
    tool: str
    source: str
    """``policy``, ``rule``, ``user`` or ``sandbox`` (a plain string: the replay fast path decodes
    it without validation)."""
    decision: str
    """``run``, ``run_unsandboxed``, ``ask``, ``reject``, ``approved``, ``approved_for_session``,
    ``denied``, ``abort`` or ``sandbox_denied``."""
    reason: str = ""
    command: list[str] | None = None
