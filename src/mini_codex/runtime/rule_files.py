"""Find and load the session's command rules: ``$MINI_CODEX_HOME/rules/*.rules``, then the
project's ``<cwd>/.mini-codex/rules/*.rules`` (each directory in name order).

A file that cannot be read or evaluated raises ``RulesError`` naming it (the session does not
start with half its rules).
"""

from __future__ import annotations

from pathlib import Path

from mini_codex.policy.rules import RulesError, RuleSet, load_rules

__all__ = ["load_rule_files", "rule_file_paths"]


def rule_file_paths(home: Path, cwd: Path) -> list[Path]:
    found: list[Path] = []
    for directory in (home / "rules", cwd / ".mini-codex" / "rules"):
        if directory.is_dir():
            found.extend(sorted(p for p in directory.glob("*.rules") if p.is_file()))
    return found


def read_rule_files(paths: list[Path]) -> RuleSet:
    texts: list[tuple[str, str]] = []
    for path in paths:
        try:
            texts.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            raise RulesError(f"cannot read rules file {path}: {exc}") from None
    return load_rules(texts)


def load_rule_files(home: Path, cwd: Path) -> RuleSet:
    return read_rule_files(rule_file_paths(home, cwd))
