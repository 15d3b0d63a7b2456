"""The pure approval decisions, rules included (the tool-level matrix is in tests/tools)."""

from __future__ import annotations

import pytest

from mini_codex.policy.approval import Ask, Reject, Run, assess_exec, looks_like_sandbox_denial
from mini_codex.policy.rules import load_rules
from mini_codex.protocol.policy import ApprovalPolicy

RULES = load_rules(
    [
        (
            "r.rules",
            'prefix_rule(pattern = ["make"])\n'
            'prefix_rule(pattern = ["git", "push"], decision = "prompt",\n'
            '            justification = "pushes")\n'
            'prefix_rule(pattern = ["rm", "-rf"], decision = "forbidden")\n',
        )
    ]
)


def bash(script: str) -> list[str]:
    return ["/bin/bash", "-c", script]


@pytest.mark.parametrize("approval", ["untrusted", "on-failure", "on-request", "never"])
def test_rules_decide_first(approval: ApprovalPolicy) -> None:
    def assess(script: str) -> object:
        return assess_exec(bash(script), approval=approval, sandbox="workspace-write", rules=RULES)

    assert assess("make && make test") == Run(
        sandboxed=False, source="rule", reason="allowed by rule `make`"
    )
    assert assess("ls && rm -rf build") == Reject("forbidden by rule `rm -rf`", "rule")
    pushed = assess("git push origin")
    if approval == "never":
        assert pushed == Reject(
            "rule `git push` requires approval, but the approval policy is never", "rule"
        )
    else:
        assert pushed == Ask("rule `git push` requires approval: pushes", "rule", escalate=True)


def test_a_partly_allowed_script_falls_back_to_the_policy() -> None:
    assert assess_exec(
        bash("make && touch x"), approval="untrusted", sandbox="workspace-write", rules=RULES
    ) == Ask("untrusted: only known-safe commands run without approval", "policy", escalate=False)


def test_an_opaque_script_is_matched_as_a_whole() -> None:
    # Not plain (a redirection): the rules see the whole argv, which no rule matches.
    assert assess_exec(
        bash("make > log"), approval="on-request", sandbox="workspace-write", rules=RULES
    ) == Run(sandboxed=True, source="policy", reason="on-request policy")


def test_session_prefixes_and_full_access() -> None:
    assert assess_exec(
        bash("touch a && touch b"),
        approval="untrusted",
        sandbox="workspace-write",
        session_prefixes=[["touch"]],
    ) == Run(sandboxed=True, source="user", reason="approved for the session")
    assert assess_exec(bash("touch a"), approval="never", sandbox="danger-full-access") == Run(
        sandboxed=False, source="policy", reason="never policy"
    )


def test_sandbox_denials_are_recognized_from_the_output() -> None:
    assert looks_like_sandbox_denial(1, "touch: cannot touch '/x': Read-only file system")
    assert looks_like_sandbox_denial(7, "curl: (6) Could not resolve host: example.com")
    assert not looks_like_sandbox_denial(0, "Permission denied")
    assert not looks_like_sandbox_denial(1, "AssertionError: 1 != 2")
