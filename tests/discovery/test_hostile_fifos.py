"""Hostile input class: FIFOs where discovery reads files (AGENTS.md, .gitignore, exclude)."""

from __future__ import annotations

import os
from pathlib import Path

from hostile import load, repo, scan


def test_an_agents_md_fifo_is_skipped_with_a_warning(tmp_path: Path) -> None:
    root = repo(tmp_path)
    os.mkfifo(root / "AGENTS.md")
    loaded = load(root, [root / "AGENTS.md"])
    assert (loaded.text, loaded.warnings) == (
        None,
        (f"AGENTS.md file {root}/AGENTS.md is a FIFO; skipped",),
    )


def test_a_symlink_to_a_fifo_is_skipped_and_the_next_name_is_used(tmp_path: Path) -> None:
    root = repo(tmp_path)
    os.mkfifo(root / "pipe")
    (root / "AGENTS.override.md").symlink_to(root / "pipe")
    (root / "AGENTS.md").write_text("the rules")
    loaded = load(root, [root / "pipe"])
    assert (loaded.text, loaded.sources, loaded.warnings) == (
        "the rules",
        (f"{root}/AGENTS.md",),
        (f"AGENTS.md file {root}/AGENTS.override.md is a FIFO; skipped",),
    )


def test_fifo_ignore_files_are_skipped_and_the_fifo_is_listed(tmp_path: Path) -> None:
    root = repo(tmp_path)
    os.mkfifo(root / ".gitignore")
    os.mkfifo(root / ".git" / "info" / "exclude")
    os.mkfifo(root / "src" / "events")
    fifos = [root / ".gitignore", root / ".git/info/exclude", root / "src/events"]
    assert scan(root, fifos) == (
        [".gitignore", "README.md", "src/events", "src/main.py"],
        (
            f"{root}/.git/info/exclude is a FIFO; skipped",
            f"{root}/.gitignore is a FIFO; skipped",
        ),
    )
