"""The session's rules: the user's and the project's files; project rules can only tighten."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_codex.policy.rules import RulesError
from mini_codex.runtime.rule_files import load_rule_files


def test_user_rules_then_project_rules_without_their_allow_rules(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "repo"
    (home / "rules").mkdir(parents=True)
    (cwd / ".mini-codex" / "rules").mkdir(parents=True)
    (home / "rules" / "default.rules").write_text('prefix_rule(pattern = ["make"])\n')
    (cwd / ".mini-codex" / "rules" / "repo.rules").write_text(
        'prefix_rule(pattern = ["bash"])\nprefix_rule(pattern = ["curl"], decision = "forbidden")\n'
    )
    rules = load_rule_files(home, cwd)
    assert [(r.pattern, r.decision) for r in rules.rules] == [
        ((("make",),), "allow"),
        ((("curl",),), "forbidden"),
    ]
    assert rules.check(["bash", "-c", "x"]) == {"matchedRules": []}


def test_a_bad_file_stops_the_session_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "bad.rules").write_text("prefix_rule(\n")
    with pytest.raises(RulesError, match=r"bad\.rules:"):
        load_rule_files(tmp_path, tmp_path)
