"""The port through which tools ask the user and record safety decisions (runtime implements it).

``Approvals`` is narrow on purpose: the decisions themselves are pure (``mini_codex.policy``);
a tool asks ``policy`` what to do, and when the answer is "ask", it calls ``request`` and acts on
the ``ApprovalAnswer``. Every decision goes to ``record`` (persisted and emitted by the runtime).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mini_codex.policy.rules import RuleSet
from mini_codex.protocol.approvals import ApprovalAnswer, ApprovalRequest, SafetyDecision

__all__ = ["Approvals"]


class Approvals(Protocol):
    @property
    def rules(self) -> RuleSet:
        """The session's command rules."""
        ...

    def session_prefixes(self) -> Sequence[Sequence[str]]:
        """Commands (exact argv or prefixes) the user approved for the session."""
        ...

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Ask the user (an ``abort`` answer also stops the turn)."""
        ...

    async def record(self, decision: SafetyDecision) -> None:
        """Persist and emit one decision."""
        ...
