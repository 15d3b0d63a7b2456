"""Pure safety decisions: approval policy, command rules (Starlark) and known-safe detection.

* ``safe_commands``: which commands only read (``untrusted`` runs them without asking), parsing
  ``bash -lc`` scripts with tree-sitter-bash (``shell_parse``).
* ``rules``: Codex's ``prefix_rule`` files evaluated with a real Starlark interpreter.
* ``approval``: what happens to a command or a patch under an approval policy — run (sandboxed or
  not), ask the user, or reject — and whether a failure looks like a sandbox denial.

No I/O besides what callers hand in (rule file texts are read by the caller).
"""

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
