"""Command rules (Starlark ``prefix_rule``) against Codex's documented examples."""

from __future__ import annotations

import pytest

from mini_codex.policy.rules import RulesError, RuleSet, load_rules

DOCS_RULE = """
# Prompt before running commands with the prefix `gh pr view` outside the sandbox.
prefix_rule(
    pattern = ["gh", "pr", "view"],
    decision = "prompt",
    justification = "Viewing PRs is allowed with approval",
    match = [
        "gh pr view 7888",
        "gh pr view --repo openai/codex",
        "gh pr view 7888 --json title,body,comments",
    ],
    not_match = [
        "gh pr --repo openai/codex view 7888",
    ],
)
"""

README_RULE = """
prefix_rule(
    pattern = ["cmd", ["alt1", "alt2"]],
    decision = "prompt",
    match = [["cmd", "alt1"], "cmd alt2"],
    not_match = [["cmd", "oops"], "cmd alt3"],
)
"""

LAYERED = """
prefix_rule(pattern = ["git"])
prefix_rule(pattern = ["git", "push"], decision = "prompt")
prefix_rule(pattern = ["git", "push", "--force"], decision = "forbidden",
            justification = "history rewrites are not allowed")
"""


def rules(*texts: str) -> RuleSet:
    return load_rules((f"r{i}.rules", text) for i, text in enumerate(texts))


def test_prompt_rule_from_the_codex_docs() -> None:
    assert rules(DOCS_RULE).check(["gh", "pr", "view", "7888"]) == {
        "matchedRules": [
            {
                "prefixRuleMatch": {
                    "matchedPrefix": ["gh", "pr", "view"],
                    "decision": "prompt",
                    "justification": "Viewing PRs is allowed with approval",
                }
            }
        ],
        "decision": "prompt",
    }


def test_no_match_has_no_decision() -> None:
    assert rules(DOCS_RULE).check(["gh", "pr", "--repo", "x", "view"]) == {"matchedRules": []}


def test_alternatives_and_string_or_list_examples() -> None:
    ruleset = rules(README_RULE)
    assert ruleset.check(["cmd", "alt2", "x"])["decision"] == "prompt"
    assert ruleset.check(["cmd", "alt3"]) == {"matchedRules": []}


def test_allow_is_the_default_and_the_strictest_match_wins() -> None:
    ruleset = rules(LAYERED)
    assert ruleset.check(["git", "status"]) == {
        "matchedRules": [{"prefixRuleMatch": {"matchedPrefix": ["git"], "decision": "allow"}}],
        "decision": "allow",
    }
    assert ruleset.check(["git", "push", "origin"])["decision"] == "prompt"
    assert ruleset.check(["git", "push", "--force", "origin"]) == {
        "matchedRules": [
            {"prefixRuleMatch": {"matchedPrefix": ["git"], "decision": "allow"}},
            {"prefixRuleMatch": {"matchedPrefix": ["git", "push"], "decision": "prompt"}},
            {
                "prefixRuleMatch": {
                    "matchedPrefix": ["git", "push", "--force"],
                    "decision": "forbidden",
                    "justification": "history rewrites are not allowed",
                }
            },
        ],
        "decision": "forbidden",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('prefix_rule(pattern = ["a"], match = ["b c"])', "r0.rules:1:1: match example 'b c'"),
        (
            'prefix_rule(pattern = ["a"], not_match = ["a b"])',
            "r0.rules:1:1: not_match example 'a b' matches the rule",
        ),
        ('prefix_rule(pattern = ["a"], decision = "maybe")', "decision must be allow, prompt"),
        ("prefix_rule(pattern = [])", "pattern must be a non-empty list"),
        ('prefix_rule(pattern = ["a"], justification = " ")', "justification must be"),
        ("prefix_rule(\n  pattern = [1])", "pattern element must be a string"),
        ("prefix_rule(", "r0.rules:1:"),
        ('unknown_builtin(pattern = ["a"])', "r0.rules:1:1"),
    ],
)
def test_bad_rules_name_the_file_and_line(text: str, message: str) -> None:
    with pytest.raises(RulesError) as info:
        rules(text)
    assert message in str(info.value)
