"""Session approvals: the one async callback that answers approval requests, and the record of
every safety decision (the runtime side of ``tools.approvals.Approvals``).

* ``request``: the request is persisted and emitted (``exec_approval_request`` /
  ``apply_patch_approval_request``), the callback answers it, the answer is persisted as a
  ``safety_decision`` from the ``user``. ``approved_for_session`` adds the answer's prefix (or the
  command itself) to the session's approved prefixes, which the next step's ``permissions``
  section shows to the model; ``abort`` also stops the turn. Without a callback every request is
  denied (nobody can be asked).
* ``record``: persist and emit one decision.

Front ends (``exec`` on a terminal or not, the interactive UI later) differ only in the callback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence

from mini_codex.policy.approval import commands_of
from mini_codex.policy.rules import RuleSet
from mini_codex.protocol import EventMsgLine
from mini_codex.protocol.approvals import (
    ApprovalAnswer,
    ApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)
from mini_codex.runtime.recording import Recording

__all__ = ["ApprovalCallback", "SessionApprovals", "session_prefix_for"]

ApprovalCallback = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
"""Answers one approval request (a terminal prompt, a UI, a test)."""


def session_prefix_for(command: Sequence[str]) -> list[str]:
    """What "approve for the session" remembers by default: the single plain command of a
    ``bash -lc`` script (so the permissions section reads ``["touch", "x"]``), else the argv."""
    commands = commands_of(command)
    return commands[0] if len(commands) == 1 else list(command)


class SessionApprovals:
    def __init__(
        self,
        recording: Recording,
        *,
        rules: RuleSet | None = None,
        callback: ApprovalCallback | None = None,
        on_abort: Callable[[], None] | None = None,
        prefixes: Iterable[Sequence[str]] = (),
    ) -> None:
        self._recording = recording
        self._rules = rules or RuleSet()
        self._callback = callback
        self._on_abort = on_abort
        self._prefixes: list[tuple[str, ...]] = []
        for prefix in prefixes:
            self._add(prefix)

    @property
    def rules(self) -> RuleSet:
        return self._rules

    def session_prefixes(self) -> list[tuple[str, ...]]:
        return list(self._prefixes)

    def approve_prefix(self, prefix: Sequence[str]) -> None:
        """Approve ``prefix`` for the session (a resumed session restores its prefixes)."""
        self._add(prefix)

    def _add(self, prefix: Sequence[str]) -> None:
        item = tuple(prefix)
        if item and item not in self._prefixes:
            self._prefixes.append(item)

    async def _persist(self, event: ApprovalRequest | SafetyDecision) -> None:
        await self._recording.record_lines([EventMsgLine(payload=event)])
        self._recording.emit(event)

    async def record(self, decision: SafetyDecision) -> None:
        await self._persist(decision)

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        await self._persist(request)
        if self._callback is None:
            answer = ApprovalAnswer(decision="denied", reason="no approval callback")
        else:
            answer = await self._callback(request)
        command = request.command if isinstance(request, ExecApprovalRequest) else None
        if answer.decision == "approved_for_session" and command is not None:
            prefix = answer.prefix or session_prefix_for(command)
            self._add(prefix)
        tool = "shell" if isinstance(request, ExecApprovalRequest) else "apply_patch"
        reason = answer.reason or ""
        if answer.decision == "approved_for_session" and command is not None:
            reason = f"prefix {list(self._prefixes[-1])}" + (f"; {reason}" if reason else "")
        await self.record(
            SafetyDecision(
                call_id=request.call_id,
                tool=tool,
                source="user",
                decision=answer.decision,
                reason=reason,
                command=command,
            )
        )
        if answer.decision == "abort" and self._on_abort is not None:
            self._on_abort()
        return answer
