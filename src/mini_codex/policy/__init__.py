"""Pure safety decisions: approval policy, command rules (Starlark) and known-safe detection.

* ``safe_commands``: which commands only read (``untrusted`` runs them without asking), parsing
  ``bash -lc`` scripts with tree-sitter-bash (``shell_parse``).
* ``rules``: Codex's ``prefix_rule`` files evaluated with a real Starlark interpreter.
* ``approval``: what happens to a command or a patch under an approval policy — run (sandboxed or
  not), ask the user, or reject — and whether a failure looks like a sandbox denial.

No I/O besides what callers hand in (rule file texts are read by the caller).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex._lazy import lazy_exports

if TYPE_CHECKING:
    from mini_codex.policy.approval import (
        Ask,
        ExecAssessment,
        PatchAssessment,
        Reject,
        Run,
        assess_exec,
        assess_patch,
        looks_like_sandbox_denial,
    )
    from mini_codex.policy.rules import (
        Decision,
        PrefixRule,
        RuleMatch,
        RulesError,
        RuleSet,
        load_rules,
    )
    from mini_codex.policy.safe_commands import is_known_safe_command
    from mini_codex.policy.shell_parse import parse_plain_commands, shell_script_of

__all__ = [
    "Ask",
    "Decision",
    "ExecAssessment",
    "PatchAssessment",
    "PrefixRule",
    "Reject",
    "RuleMatch",
    "RuleSet",
    "RulesError",
    "Run",
    "assess_exec",
    "assess_patch",
    "is_known_safe_command",
    "load_rules",
    "looks_like_sandbox_denial",
    "parse_plain_commands",
    "shell_script_of",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "Ask": "mini_codex.policy.approval",
        "ExecAssessment": "mini_codex.policy.approval",
        "PatchAssessment": "mini_codex.policy.approval",
        "Reject": "mini_codex.policy.approval",
        "Run": "mini_codex.policy.approval",
        "assess_exec": "mini_codex.policy.approval",
        "assess_patch": "mini_codex.policy.approval",
        "looks_like_sandbox_denial": "mini_codex.policy.approval",
        "Decision": "mini_codex.policy.rules",
        "PrefixRule": "mini_codex.policy.rules",
        "RuleMatch": "mini_codex.policy.rules",
        "RulesError": "mini_codex.policy.rules",
        "RuleSet": "mini_codex.policy.rules",
        "load_rules": "mini_codex.policy.rules",
        "is_known_safe_command": "mini_codex.policy.safe_commands",
        "parse_plain_commands": "mini_codex.policy.shell_parse",
        "shell_script_of": "mini_codex.policy.shell_parse",
    },
)
