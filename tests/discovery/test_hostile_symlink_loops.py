"""Hostile input class: symlink loops where discovery reads or walks."""

from __future__ import annotations

from pathlib import Path

from hostile import load, repo, scan, without_blocking

from mini_codex.discovery import WorkspaceScanner


def test_agents_md_loops_are_skipped_with_a_warning(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "AGENTS.md").symlink_to("AGENTS.md")  # itself
    (root / "src" / "AGENTS.md").symlink_to("b")
    (root / "src" / "b").symlink_to("AGENTS.md")  # a two-link cycle
    loaded = load(root / "src")
    assert (loaded.text, loaded.warnings) == (
        None,
        (
            f"AGENTS.md file {root}/AGENTS.md is a symlink loop; skipped",
            f"AGENTS.md file {root}/src/AGENTS.md is a symlink loop; skipped",
        ),
    )


def test_a_looping_gitignore_is_reported_and_the_scan_goes_on(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / ".gitignore").symlink_to(".gitignore")
    assert scan(root) == (
        [".gitignore", "README.md", "src/main.py"],
        (f"cannot read {root}/.gitignore: Too many levels of symbolic links",),
    )


def test_followed_directory_links_never_loop(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "src" / "up").symlink_to("..")  # src/up -> the root: an ancestor
    (root / "src" / "self").symlink_to(".")
    (root / "out").symlink_to("/")  # leaves the root
    scanner = WorkspaceScanner(root, follow_symlinks=True)
    files = without_blocking(scanner.scan)
    assert sorted(files.paths) == ["README.md", "out", "src/main.py", "src/self", "src/up"]


def test_a_git_file_instead_of_a_directory_is_no_problem(tmp_path: Path) -> None:
    """In a git worktree ``.git`` is a file: there is no ``.git/info/exclude`` to read."""
    (tmp_path / ".git").write_text("gitdir: /elsewhere\n")
    (tmp_path / "a.txt").write_text("a")
    assert scan(tmp_path) == (["a.txt"], ())
