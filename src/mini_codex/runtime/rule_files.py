"""Find and load the session's command rules: ``$MINI_CODEX_HOME/rules/*.rules`` (the user's),
then the project's ``<cwd>/.mini-codex/rules/*.rules`` (each directory in name order).

Project rules come with the repository, so they may only tighten: their ``allow`` rules (which
would run commands outside the sandbox without asking) are dropped; ``prompt`` and ``forbidden``
apply. A file that cannot be read or evaluated raises ``RulesError`` naming it (the session does
not start with half its rules).
"""

from __future__ import annotations

from pathlib import Path

from mini_codex.policy.rules import RulesError, RuleSet, load_rules

__all__ = ["load_rule_files", "read_rule_files", "rule_file_paths"]


def rule_file_paths(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.rules") if p.is_file())


def read_rule_files(paths: list[Path]) -> RuleSet:
    texts: list[tuple[str, str]] = []
    for path in paths:
        try:
            texts.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            raise RulesError(f"cannot read rules file {path}: {exc}") from None
    return load_rules(texts)


def load_rule_files(home: Path, cwd: Path) -> RuleSet:
    user = read_rule_files(rule_file_paths(home / "rules"))
    project = read_rule_files(rule_file_paths(cwd / ".mini-codex" / "rules"))
    tightening = tuple(rule for rule in project.rules if rule.decision != "allow")
    return RuleSet(user.rules + tightening)
