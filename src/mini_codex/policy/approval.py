"""What happens to a command or a patch under an approval policy (Codex semantics). Pure.

Commands (``assess_exec``), in order:

1. Command rules: the strictest decision of the rules matching any of the command's plain
   commands (a ``bash -lc`` script is split with tree-sitter; an opaque script is matched as its
   whole argv). ``forbidden`` rejects; ``prompt`` asks (rejects under ``never``); ``allow`` on
   every command runs it outside the sandbox without asking (rules say what may run unsandboxed).
2. An escalation request (``sandbox_permissions: "require_escalated"``) is only accepted under
   ``on-request``; there it asks, unless the command was approved for the session.
3. A command approved for the session (exact argv or prefix) runs without asking.
4. ``untrusted`` asks for every command that is not known safe. Every other policy runs it in
   the sandbox.

After a sandbox denial (``looks_like_sandbox_denial``), only ``on-failure`` asks to re-run the
command unsandboxed; the other policies return the failure to the model.

Patches (``assess_patch``): inside the writable roots they apply without asking, except under
``untrusted``, which asks for every patch. Outside the roots ``never`` rejects, every other policy
asks; an approved patch is applied without the sandbox's path limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import msgspec

from mini_codex.policy.rules import RuleMatch, RuleSet, strictest
from mini_codex.policy.safe_commands import is_known_safe_command
from mini_codex.policy.shell_parse import parse_plain_commands, shell_script_of
from mini_codex.protocol.policy import ApprovalPolicy, SandboxMode

__all__ = [
    "Ask",
    "ExecAssessment",
    "PatchAssessment",
    "Reject",
    "Run",
    "assess_exec",
    "assess_patch",
    "commands_of",
    "looks_like_sandbox_denial",
    "matches_prefix",
]


class Run(msgspec.Struct, frozen=True):
    sandboxed: bool
    source: str
    """``policy`` or ``rule`` or ``user`` (approved for the session)."""
    reason: str


class Ask(msgspec.Struct, frozen=True):
    reason: str
    source: str
    escalate: bool
    """Whether an approval runs the command outside the sandbox."""


class Reject(msgspec.Struct, frozen=True):
    reason: str
    source: str


ExecAssessment: TypeAlias = Run | Ask | Reject
PatchAssessment: TypeAlias = Run | Ask | Reject


def commands_of(argv: Sequence[str]) -> list[list[str]]:
    """The plain commands of ``argv`` (a parsed ``bash -lc`` script), else ``[argv]``."""
    script = shell_script_of(argv)
    if script is not None:
        parsed = parse_plain_commands(script)
        if parsed is not None:
            return parsed
    return [list(argv)]


def matches_prefix(argv: Sequence[str], prefixes: Sequence[Sequence[str]]) -> bool:
    """Whether ``argv``, or every plain command of it, starts with an approved prefix."""

    def approved(command: Sequence[str]) -> bool:
        return any(
            len(prefix) <= len(command) and list(command[: len(prefix)]) == list(prefix)
            for prefix in prefixes
        )

    return approved(argv) or all(approved(command) for command in commands_of(argv))


def _rule_matches(argv: Sequence[str], rules: RuleSet) -> tuple[list[RuleMatch], bool]:
    """All matches over the plain commands, and whether every command matched a rule."""
    found: list[RuleMatch] = []
    every = True
    for command in commands_of(argv):
        matched = rules.matches(command)
        found.extend(matched)
        every = every and bool(matched)
    return found, every


def assess_exec(
    argv: Sequence[str],
    *,
    approval: ApprovalPolicy,
    sandbox: SandboxMode,
    escalated: bool = False,
    rules: RuleSet | None = None,
    session_prefixes: Sequence[Sequence[str]] = (),
) -> ExecAssessment:
    """The decision for one command before it runs (see the module docstring)."""
    unsandboxed = sandbox == "danger-full-access"
    if rules is not None and rules.rules:
        found, every = _rule_matches(argv, rules)
        decision = strictest(m.decision for m in found)
        why = "; ".join(m.justification for m in found if m.justification)
        prefix = next((" ".join(m.matched_prefix) for m in found), "")
        match decision:
            case "forbidden":
                return Reject(f"forbidden by rule `{prefix}`" + (f": {why}" if why else ""), "rule")
            case "prompt":
                if approval == "never":
                    return Reject(
                        f"rule `{prefix}` requires approval, but the approval policy is never",
                        "rule",
                    )
                if not matches_prefix(argv, session_prefixes):
                    return Ask(f"rule `{prefix}` requires approval" + (f": {why}" if why else ""),
                               "rule", escalate=True)  # fmt: skip
                return Run(sandboxed=False, source="user", reason="approved for the session")
            case "allow" if every:
                return Run(sandboxed=False, source="rule", reason=f"allowed by rule `{prefix}`")
            case "allow" | None:
                pass
    if escalated:
        if approval != "on-request":
            return Reject(
                f"approval policy is {approval}; escalated permissions can only be requested "
                "under on-request. Run the command within the sandbox instead.",
                "policy",
            )
        if matches_prefix(argv, session_prefixes):
            return Run(sandboxed=False, source="user", reason="approved for the session")
        return Ask("the model requested escalated permissions", "policy", escalate=True)
    if matches_prefix(argv, session_prefixes):
        return Run(sandboxed=not unsandboxed, source="user", reason="approved for the session")
    if approval == "untrusted" and not is_known_safe_command(argv):
        return Ask("untrusted: only known-safe commands run without approval", "policy",
                   escalate=False)  # fmt: skip
    reason = "known safe" if is_known_safe_command(argv) else f"{approval} policy"
    return Run(sandboxed=not unsandboxed, source="policy", reason=reason)


def assess_patch(
    *, approval: ApprovalPolicy, sandbox: SandboxMode, within_roots: bool
) -> PatchAssessment:
    """The decision for one patch (see the module docstring)."""
    if sandbox == "danger-full-access" or within_roots:
        if approval == "untrusted":
            return Ask("untrusted: every patch needs approval", "policy", escalate=False)
        return Run(sandboxed=True, source="policy", reason="inside the writable roots")
    if approval == "never":
        return Reject(
            "the patch writes outside the writable roots and the approval policy is never",
            "policy",
        )
    return Ask("the patch writes outside the writable roots", "policy", escalate=True)


_DENIAL_MARKERS = (
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "network is unreachable",
    "cannot assign requested address",
    "temporary failure in name resolution",
    "could not resolve host",
    "connection refused",
)


def looks_like_sandbox_denial(exit_code: int, output: str) -> bool:
    """Whether a failed sandboxed command probably failed because of the sandbox (heuristic)."""
    if exit_code == 0:
        return False
    lowered = output.lower()
    return any(marker in lowered for marker in _DENIAL_MARKERS)
