"""Known-safe detection, with ``bash -lc`` scripts parsed by tree-sitter-bash."""

from __future__ import annotations

import pytest

from mini_codex.policy.safe_commands import is_known_safe_command
from mini_codex.policy.shell_parse import parse_plain_commands


@pytest.mark.parametrize(
    ("script", "commands"),
    [
        ('ls -la "a b" && git status | head -n 3', [["ls", "-la", "a b"], ["git", "status"],
                                                     ["head", "-n", "3"]]),
        ("grep 'x y' f; pwd", [["grep", "x y", "f"], ["pwd"]]),
        ("echo $HOME", None),
        ("ls > out", None),
        ("cat $(whoami)", None),
        ("FOO=1 ls", None),
        ("(ls)", None),
        ("ls &", None),
        ("ls &&", None),
        ('echo "$(rm -rf x)"', None),
    ],
)  # fmt: skip
def test_plain_commands(script: str, commands: list[list[str]] | None) -> None:
    assert parse_plain_commands(script) == commands


@pytest.mark.parametrize(
    ("argv", "safe"),
    [
        (["ls", "-la"], True),
        (["bash", "-lc", "ls && cat README.md | wc -l"], True),
        (["/bin/bash", "-c", "git status && git log -n 3"], True),
        (["bash", "-lc", "ls > listing.txt"], False),
        (["bash", "-lc", "rm -rf build"], False),
        (["bash", "-lc", "echo $(touch x)"], False),
        (["find", ".", "-name", "*.py"], True),
        (["find", ".", "-delete"], False),
        (["find", ".", "-exec", "rm", "{}", ";"], False),
        (["rg", "--pre", "sh", "x"], False),
        (["rg", "todo"], True),
        (["git", "push"], False),
        (["git", "diff", "--output=x"], False),
        (["sed", "-n", "1,5p", "f"], True),
        (["sed", "-i", "s/a/b/", "f"], False),
        (["python3", "-c", "print(1)"], False),
    ],
)
def test_known_safe(argv: list[str], safe: bool) -> None:
    assert is_known_safe_command(argv) is safe
