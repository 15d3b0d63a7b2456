"""AGENTS.md discovery, budget and cache on real temporary directories (spec runtime §7)."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from mini_codex.discovery import (
    PROJECT_DOC_SEPARATOR,
    AgentsMdCache,
    AgentsMdConfig,
    LoadedAgentsMd,
    discover_agents_md_paths,
    load_agents_md,
)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def age(*paths: Path) -> None:
    past = time.time() - 100
    for path in paths:
        os.utime(path, (past, past))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """repo/.git, repo/AGENTS.md, repo/pkg/AGENTS.md, cwd repo/pkg/mod (no file)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "root rules")
    write(root / "pkg/AGENTS.md", "pkg rules")
    (root / "pkg/mod").mkdir()
    return root


def test_root_marker_bounds_the_search_and_files_join_root_first(repo: Path) -> None:
    write(repo.parent / "AGENTS.md", "above the root: never read")
    cwd = repo / "pkg/mod"
    assert load_agents_md(cwd) == LoadedAgentsMd(
        directory=str(cwd),
        text="root rules\n\npkg rules",
        sources=(str(repo / "AGENTS.md"), str(repo / "pkg/AGENTS.md")),
        warnings=(),
    )


def test_git_file_marker_counts_like_a_directory(tmp_path: Path) -> None:
    write(tmp_path / "wt/.git", "gitdir: /elsewhere\n")
    write(tmp_path / "wt/AGENTS.md", "worktree rules")
    (tmp_path / "wt/sub").mkdir()
    assert load_agents_md(tmp_path / "wt/sub").text == "worktree rules"


def test_no_marker_means_only_the_cwd_is_searched(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "parent rules")
    write(tmp_path / "cwd/AGENTS.md", "cwd rules")
    assert load_agents_md(tmp_path / "cwd").text == "cwd rules"
    assert load_agents_md(tmp_path / "cwd" / "empty") == LoadedAgentsMd(None, None, (), ())


def test_empty_marker_list_disables_parent_traversal(repo: Path) -> None:
    config = AgentsMdConfig(root_markers=())
    assert load_agents_md(repo / "pkg", config).text == "pkg rules"


def test_custom_root_markers(repo: Path) -> None:
    write(repo / "pkg/pyproject.toml", "")
    config = AgentsMdConfig(root_markers=("pyproject.toml",))
    assert load_agents_md(repo / "pkg/mod", config).text == "pkg rules"


def test_invalid_root_marker_warns_and_uses_the_default(repo: Path) -> None:
    loaded = load_agents_md(repo / "pkg", AgentsMdConfig(root_markers=("a/b",)))
    assert loaded.text == "root rules\n\npkg rules"
    assert loaded.warnings == ("invalid project root marker 'a/b'; using the default ('.git',)",)


def test_override_is_preferred_and_fallbacks_come_last(repo: Path) -> None:
    write(repo / "AGENTS.override.md", "root override")
    write(repo / "pkg/mod/CLAUDE.md", "fallback rules")
    config = AgentsMdConfig(fallback_filenames=("", "AGENTS.md", "CLAUDE.md"))
    assert discover_agents_md_paths(repo / "pkg/mod", config) == (
        repo / "AGENTS.override.md",
        repo / "pkg/AGENTS.md",
        repo / "pkg/mod/CLAUDE.md",
    )
    assert load_agents_md(repo / "pkg/mod", config).text == (
        "root override\n\npkg rules\n\nfallback rules"
    )
    assert load_agents_md(repo / "pkg/mod").text == "root override\n\npkg rules"


def test_directories_named_like_candidates_are_skipped_and_symlinks_allowed(repo: Path) -> None:
    (repo / "pkg/AGENTS.md").unlink()
    (repo / "pkg/AGENTS.override.md").mkdir()
    write(repo / "shared.md", "shared rules")
    (repo / "pkg/AGENTS.md").symlink_to(repo / "shared.md")
    assert load_agents_md(repo / "pkg").text == "root rules\n\nshared rules"


def test_budget_is_shared_and_truncation_warns(repo: Path) -> None:
    config = AgentsMdConfig(max_bytes=14)
    loaded = load_agents_md(repo / "pkg", config)
    assert loaded == LoadedAgentsMd(
        directory=str(repo / "pkg"),
        text="root rules\n\npkg ",
        sources=(str(repo / "AGENTS.md"), str(repo / "pkg/AGENTS.md")),
        warnings=(
            f"AGENTS.md file {repo / 'pkg/AGENTS.md'} exceeds the remaining budget (4 bytes); "
            "truncating.",
        ),
    )


def test_budget_exhausted_stops_reading(repo: Path) -> None:
    loaded = load_agents_md(repo / "pkg", AgentsMdConfig(max_bytes=10))
    assert (loaded.text, loaded.sources, loaded.warnings) == (
        "root rules",
        (str(repo / "AGENTS.md"),),
        (),
    )


def test_default_budget_is_32_kib(repo: Path) -> None:
    write(repo / "AGENTS.md", "x" * 40_000)
    loaded = load_agents_md(repo)
    assert loaded.text == "x" * 32_768
    assert len(loaded.warnings) == 1


def test_zero_budget_disables_project_docs_but_keeps_user_instructions(repo: Path) -> None:
    config = AgentsMdConfig(max_bytes=0)
    assert load_agents_md(repo, config) == LoadedAgentsMd(None, None, (), ())
    assert load_agents_md(repo, config, user_instructions="global") == LoadedAgentsMd(
        str(repo), "global", (), ()
    )


def test_user_instructions_come_first_with_the_project_doc_separator(repo: Path) -> None:
    loaded = load_agents_md(repo, user_instructions="be brief")
    assert loaded.text == "be brief" + PROJECT_DOC_SEPARATOR + "root rules"
    assert PROJECT_DOC_SEPARATOR == "\n\n--- project-doc ---\n\n"


def test_whitespace_only_file_contributes_nothing_and_consumes_no_budget(repo: Path) -> None:
    write(repo / "AGENTS.md", " \n\t\n")
    loaded = load_agents_md(repo / "pkg", AgentsMdConfig(max_bytes=9))
    assert (loaded.text, loaded.sources, loaded.warnings) == (
        "pkg rules",
        (str(repo / "pkg/AGENTS.md"),),
        (),
    )


def test_invalid_utf8_is_replaced_with_a_warning(repo: Path) -> None:
    write(repo / "AGENTS.md", b"caf\xe9 rules")
    loaded = load_agents_md(repo)
    assert loaded.text == "caf\ufffd rules"
    assert loaded.warnings == (
        f"AGENTS.md file {repo / 'AGENTS.md'} is not valid UTF-8; invalid bytes replaced.",
    )


def test_truncation_inside_a_character_drops_the_partial_sequence(repo: Path) -> None:
    write(repo / "AGENTS.md", "é" * 10)  # 2 bytes each
    loaded = load_agents_md(repo, AgentsMdConfig(max_bytes=5))
    assert loaded.text == "éé"
    assert loaded.warnings == (
        f"AGENTS.md file {repo / 'AGENTS.md'} exceeds the remaining budget (5 bytes); truncating.",
    )


# --- cache ------------------------------------------------------------------------------------


@pytest.fixture
def aged_repo(repo: Path) -> Path:
    age(repo / "AGENTS.md", repo / "pkg/AGENTS.md")
    return repo


def test_cache_hit_returns_the_identical_object_without_reloading(aged_repo: Path) -> None:
    cache = AgentsMdCache()
    first = cache.get(aged_repo / "pkg")
    assert cache.get(aged_repo / "pkg") is first
    assert cache.get(aged_repo / "pkg") is first
    assert cache.loads == 1


def test_cache_is_keyed_by_cwd_and_config(aged_repo: Path) -> None:
    cache = AgentsMdCache()
    at_pkg = cache.get(aged_repo / "pkg")
    at_root = cache.get(aged_repo)
    small = cache.get(aged_repo / "pkg", AgentsMdConfig(max_bytes=10))
    assert (at_pkg.text, at_root.text, small.text) == (
        "root rules\n\npkg rules",
        "root rules",
        "root rules",
    )
    assert cache.get(aged_repo / "pkg") is at_pkg
    assert cache.get(aged_repo / "pkg", AgentsMdConfig(max_bytes=10)) is small
    assert cache.loads == 3


def test_cache_invalidates_when_a_file_is_edited(aged_repo: Path) -> None:
    cache = AgentsMdCache()
    first = cache.get(aged_repo / "pkg")
    write(aged_repo / "pkg/AGENTS.md", "new pkg rules")
    second = cache.get(aged_repo / "pkg")
    assert second.text == "root rules\n\nnew pkg rules"
    assert second is not first


def test_cache_invalidates_when_a_candidate_or_marker_appears(aged_repo: Path) -> None:
    cache = AgentsMdCache()
    cache.get(aged_repo / "pkg/mod")
    write(aged_repo / "pkg/AGENTS.override.md", "pkg override")
    assert cache.get(aged_repo / "pkg/mod").text == "root rules\n\npkg override"
    (aged_repo / "pkg/.git").mkdir()  # pkg becomes the project root
    assert cache.get(aged_repo / "pkg/mod").text == "pkg override"


def test_reload_with_identical_content_keeps_the_cached_object(aged_repo: Path) -> None:
    cache = AgentsMdCache()
    first = cache.get(aged_repo / "pkg")
    write(aged_repo / "pkg/AGENTS.md", "pkg rules")  # rewritten, same content
    assert cache.get(aged_repo / "pkg") is first
    assert cache.loads == 2


def test_recently_modified_file_is_reread_even_with_unchanged_stat(repo: Path) -> None:
    path = repo / "pkg/AGENTS.md"
    stat = os.stat(path)
    cache = AgentsMdCache()
    assert cache.get(repo / "pkg").text == "root rules\n\npkg rules"
    path.write_text("PKG RULES")  # same size; restore mtime to simulate a coarse clock tick
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache.get(repo / "pkg").text == "root rules\n\nPKG RULES"


def test_incomplete_reload_keeps_the_cached_value(
    aged_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = AgentsMdCache()
    first = cache.get(aged_repo / "pkg")
    path = aged_repo / "pkg/AGENTS.md"
    write(path, "changed rules")
    real_open = os.open

    def failing_open(name: str, flags: int, *args: int) -> int:  # an I/O error at the OS edge
        if os.fspath(name) == str(path):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", failing_open)
    fresh = load_agents_md(aged_repo / "pkg")
    assert (fresh.text, fresh.warnings) == (
        "root rules",
        (f"AGENTS.md: cannot read {path}: Input/output error",),
    )
    assert cache.get(aged_repo / "pkg") is first
    monkeypatch.undo()
    path.unlink()
    write(path, "fixed rules")
    assert cache.get(aged_repo / "pkg").text == "root rules\n\nfixed rules"
