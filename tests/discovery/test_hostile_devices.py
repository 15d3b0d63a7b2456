"""Hostile input class: device files (``/dev/zero``, ``/dev/urandom``) where discovery reads."""

from __future__ import annotations

from pathlib import Path

from hostile import load, repo, scan


def test_an_agents_md_linked_to_a_device_is_skipped(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "AGENTS.md").symlink_to("/dev/zero")
    (root / "src" / "AGENTS.md").symlink_to("/dev/urandom")
    loaded = load(root / "src")
    assert (loaded.text, loaded.warnings) == (
        None,
        (
            f"AGENTS.md file {root}/AGENTS.md is a device; skipped",
            f"AGENTS.md file {root}/src/AGENTS.md is a device; skipped",
        ),
    )


def test_ignore_files_linked_to_devices_are_not_read(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / ".gitignore").symlink_to("/dev/zero")
    (root / ".git" / "info" / "exclude").symlink_to("/dev/urandom")
    (root / "src" / "null").symlink_to("/dev/null")
    assert scan(root) == (
        [".gitignore", "README.md", "src/main.py", "src/null"],
        (
            f"{root}/.git/info/exclude resolves outside the workspace; skipped",
            f"{root}/.gitignore resolves outside the workspace; skipped",
        ),
    )
