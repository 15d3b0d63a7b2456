"""Hostile input class: huge files (``truncate -s 20M``) where discovery reads."""

from __future__ import annotations

import os
from pathlib import Path

from hostile import load, repo, scan

from mini_codex.discovery import DEFAULT_PROJECT_DOC_MAX_BYTES

HUGE = 20 * 1024 * 1024


def test_a_huge_agents_md_is_read_up_to_the_budget(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "AGENTS.md").write_text("rules\n")
    os.truncate(root / "AGENTS.md", HUGE)  # sparse: 20 MB of NUL bytes after the rules
    loaded = load(root)
    assert loaded.text is not None
    assert (len(loaded.text.encode()), loaded.text[:6], loaded.warnings) == (
        DEFAULT_PROJECT_DOC_MAX_BYTES,
        "rules\n",
        (
            f"AGENTS.md file {root}/AGENTS.md exceeds the remaining budget "
            f"({DEFAULT_PROJECT_DOC_MAX_BYTES} bytes); truncating.",
        ),
    )


def test_a_20_mb_gitignore_is_cut_at_one_mebibyte_and_still_applies(tmp_path: Path) -> None:
    root = repo(tmp_path, ["a.log", "b.txt"])
    (root / ".gitignore").write_bytes(b"*.log\n" * (HUGE // 6))
    assert scan(root) == (
        [".gitignore", "b.txt"],
        ("ignore file .gitignore: larger than 1048576 bytes: lines after byte 1048572 ignored",),
    )


def test_a_sparse_20_mb_gitignore_and_exclude_do_not_stall_the_scan(tmp_path: Path) -> None:
    root = repo(tmp_path, ["a.log", "b.txt"])
    (root / ".gitignore").write_text("*.log\n")
    os.truncate(root / ".gitignore", HUGE)
    (root / ".git" / "info" / "exclude").write_bytes(b"")
    os.truncate(root / ".git" / "info" / "exclude", HUGE)
    files, warnings = scan(root)
    assert (files, warnings) == (
        [".gitignore", "b.txt"],
        (
            "ignore file .git/info/exclude: larger than 1048576 bytes: lines after byte 0 ignored",
            "ignore file .gitignore: larger than 1048576 bytes: lines after byte 6 ignored",
        ),
    )
