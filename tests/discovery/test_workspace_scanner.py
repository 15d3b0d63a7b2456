"""WorkspaceScanner on real temporary directory trees.

Most tests "age" the tree first (directory and file times set 100 s into the past) so that the
racy-timestamp rule does not apply and change detection has to come from the stat comparison;
the racy tests then exercise that rule on its own.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mini_codex.discovery import DEFAULT_RACY_MARGIN_NS, ScanStats, WorkspaceScanner
from mini_codex.world_state.workspace_files import WorkspaceFiles


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def age(root: Path, seconds: int = 100) -> None:
    """Move every mtime of the tree ``seconds`` into the past (ctime stays: it cannot be set)."""
    past = time.time() - seconds
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (past, past), follow_symlinks=False)
    os.utime(root, (past, past))


def paths(files: WorkspaceFiles) -> set[str]:
    return set(files.paths)


BASE = {
    "README.md": "",
    "src/app.py": "",
    "src/app.pyc": "",
    "src/debug.log": "",
    "src/keep.log": "",
    "build/out.bin": "",
    "docs/guide.md": "",
    "docs/.gitignore": "/draft.md\n",
    "docs/draft.md": "",
    "docs/sub/draft.md": "",
    ".gitignore": "*.pyc\n*.log\n!keep.log\nbuild/\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/objects/ab/cdef": "",
}
BASE_EXPECTED = {
    ".gitignore",
    "README.md",
    "docs/.gitignore",
    "docs/guide.md",
    "docs/sub/draft.md",
    "src/app.py",
    "src/keep.log",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, BASE)
    age(root)
    return root


# --- first scan: ignore rules ---------------------------------------------------------------


def test_first_scan_honours_nested_gitignore_negation_and_git_dir(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    files = scanner.scan()
    assert files.root == str(tree)
    assert paths(files) == BASE_EXPECTED
    assert scanner.warnings == ()


def test_deeper_gitignore_overrides_shallower_one(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".gitignore": "*.tmp\ncache/\n",
            "a/.gitignore": "!wanted.tmp\n",
            "a/wanted.tmp": "",
            "a/other.tmp": "",
            "wanted.tmp": "",
            "a/b/wanted.tmp": "",
            "a/cache/x": "",
        },
    )
    assert paths(WorkspaceScanner(tmp_path).scan()) == {
        ".gitignore",
        "a/.gitignore",
        "a/wanted.tmp",
        "a/b/wanted.tmp",
    }


def test_negation_cannot_reinclude_a_file_inside_an_ignored_directory(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "out/\n!out/keep.txt\n", "out/keep.txt": "", "x": ""})
    assert paths(WorkspaceScanner(tmp_path).scan()) == {".gitignore", "x"}


def test_git_info_exclude_and_extra_ignores_apply(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".git/info/exclude": "secret.txt\n",
            "secret.txt": "",
            "sub/secret.txt": "",
            "node_modules/pkg/index.js": "",
            "keep.txt": "",
            ".gitignore": "!secret.txt\n",
        },
    )
    scanner = WorkspaceScanner(tmp_path, extra_ignores=(".git/", "node_modules/"))
    # .gitignore beats info/exclude (it re-includes secret.txt); extra_ignores beat both.
    assert paths(scanner.scan()) == {".gitignore", "keep.txt", "secret.txt", "sub/secret.txt"}
    (tmp_path / ".gitignore").write_text("")
    assert paths(WorkspaceScanner(tmp_path).scan()) == {
        ".gitignore",
        "keep.txt",
        "node_modules/pkg/index.js",
    }


def test_missing_root_gives_an_empty_listing_and_a_warning(tmp_path: Path) -> None:
    scanner = WorkspaceScanner(tmp_path / "nope")
    assert paths(scanner.scan()) == set()
    assert scanner.warnings == (
        f"cannot read workspace root {str(tmp_path / 'nope')!r}: No such file or directory",
    )


def test_root_that_vanishes_and_comes_back_is_listed_again(tree: Path, tmp_path: Path) -> None:
    scanner = WorkspaceScanner(tree)
    scanner.scan()
    tree.rename(tmp_path / "away")
    assert paths(scanner.scan()) == set()
    assert scanner.warnings == (
        f"cannot read workspace root {str(tree)!r}: No such file or directory",
    )
    (tmp_path / "away").rename(tree)
    assert paths(scanner.scan()) == BASE_EXPECTED
    assert list(scanner.warnings) == []


def test_names_that_are_not_utf8_are_skipped_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path, {"ok.txt": ""})
    os.close(os.open(os.fsencode(tmp_path) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY))
    scanner = WorkspaceScanner(tmp_path)
    assert paths(scanner.scan()) == {"ok.txt"}
    assert scanner.warnings == ("skipped a name that is not valid UTF-8: 'bad\\udcff.txt'",)
    os.unlink(os.fsencode(tmp_path) + b"/bad\xff.txt")
    scanner.scan()
    assert list(scanner.warnings) == []


# --- incremental scans ----------------------------------------------------------------------


def test_unchanged_tree_returns_the_same_object_and_lists_nothing(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    first = scanner.scan()
    assert scanner.scan() is first
    assert scanner.scan() is first
    assert scanner.last_stats == ScanStats(directories=4, listed=0, added=0, removed=0)


def test_added_and_removed_files_are_detected(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    first = scanner.scan()
    write(tree, {"src/new.py": "", "docs/sub/deeper/new.md": "", "src/ignored.log": ""})
    (tree / "README.md").unlink()
    second = scanner.scan()
    assert paths(second) == (BASE_EXPECTED - {"README.md"}) | {
        "src/new.py",
        "docs/sub/deeper/new.md",
    }
    assert second.changes_since(first) == (
        frozenset({"src/new.py", "docs/sub/deeper/new.md"}),
        frozenset({"README.md"}),
    )
    assert second == WorkspaceScanner(tree).scan()


def test_renamed_file_and_directory_are_detected(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    scanner.scan()
    (tree / "src/app.py").rename(tree / "src/main.py")
    (tree / "docs").rename(tree / "manual")
    files = scanner.scan()
    assert paths(files) == {
        ".gitignore",
        "README.md",
        "manual/.gitignore",
        "manual/guide.md",
        "manual/sub/draft.md",
        "src/main.py",
        "src/keep.log",
    }
    assert files == WorkspaceScanner(tree).scan()


def test_removed_directory_drops_its_files_and_new_directory_is_scanned(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    scanner.scan()
    shutil.rmtree(tree / "docs")
    write(tree, {"lib/a/b/c.py": "", "lib/a/.gitignore": "*.tmp\n", "lib/a/x.tmp": ""})
    files = scanner.scan()
    expected = {"README.md", ".gitignore", "src/app.py", "src/keep.log"}
    assert paths(files) == expected | {"lib/a/b/c.py", "lib/a/.gitignore"}
    assert scanner.last_stats.directories == 5  # root, src, lib, lib/a, lib/a/b


def test_file_replaced_by_directory_of_the_same_name(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    scanner.scan()
    (tree / "README.md").unlink()
    write(tree, {"README.md/index.md": ""})
    assert paths(scanner.scan()) == (BASE_EXPECTED - {"README.md"}) | {"README.md/index.md"}


def test_gitignore_edit_in_place_takes_effect(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    scanner.scan()
    (tree / ".gitignore").write_text("*.pyc\n*.log\nbuild/\nsrc/app.py\n")
    assert paths(scanner.scan()) == BASE_EXPECTED - {"src/keep.log", "src/app.py"}
    (tree / "docs/.gitignore").write_text("")
    assert paths(scanner.scan()) == BASE_EXPECTED - {"src/keep.log", "src/app.py"} | {
        "docs/draft.md"
    }


def test_gitignore_appearing_and_vanishing_takes_effect(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    scanner.scan()
    (tree / "src/.gitignore").write_text("app.py\n")
    assert paths(scanner.scan()) == (BASE_EXPECTED - {"src/app.py"}) | {"src/.gitignore"}
    (tree / ".gitignore").unlink()
    assert paths(scanner.scan()) == {
        "README.md",
        "build/out.bin",
        "docs/.gitignore",
        "docs/guide.md",
        "docs/sub/draft.md",
        "src/.gitignore",
        "src/app.pyc",
        "src/debug.log",
        "src/keep.log",
    }


def test_git_info_exclude_edit_takes_effect(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    scanner.scan()
    write(tree, {".git/info/exclude": "README.md\n"})
    assert paths(scanner.scan()) == BASE_EXPECTED - {"README.md"}


def test_only_changed_directories_are_listed(tree: Path) -> None:
    scanner = WorkspaceScanner(tree)
    scanner.scan()
    write(tree, {"docs/sub/new.md": ""})
    scanner.scan()
    assert scanner.last_stats == ScanStats(directories=4, listed=1, added=1, removed=0)


# --- racy timestamps ------------------------------------------------------------------------


class FrozenStatScanner(WorkspaceScanner):
    """Simulates a coarse-timestamp file system: a directory's stat never changes."""

    def __init__(self, root: Path, **kwargs: object) -> None:
        super().__init__(root, **kwargs)  # type: ignore[arg-type]
        self.frozen: dict[str, os.stat_result] = {}

    def _stat(self, path: str) -> os.stat_result:
        if os.path.isdir(path):
            return self.frozen.setdefault(path, os.stat(path))
        return os.stat(path)


def test_racy_directory_is_relisted_although_its_stat_is_unchanged(tmp_path: Path) -> None:
    write(tmp_path, {"a/one.txt": ""})
    scanner = FrozenStatScanner(tmp_path)
    scanner.scan()
    write(tmp_path, {"a/two.txt": ""})
    assert paths(scanner.scan()) == {"a/one.txt", "a/two.txt"}


def test_without_the_racy_rule_a_same_tick_addition_would_be_missed(tmp_path: Path) -> None:
    # The control for the test above: with a clock far in the future nothing counts as recent.
    write(tmp_path, {"a/one.txt": ""})
    scanner = FrozenStatScanner(tmp_path, clock=lambda: 2**62)
    scanner.scan()
    write(tmp_path, {"a/two.txt": ""})
    assert paths(scanner.scan()) == {"a/one.txt"}


def test_file_created_right_after_a_scan_is_seen(tmp_path: Path) -> None:
    for attempt in range(20):
        root = tmp_path / str(attempt)
        write(root, {"d/first.txt": ""})
        scanner = WorkspaceScanner(root)
        scanner.scan()
        write(root, {"d/second.txt": ""})
        assert paths(scanner.scan()) == {"d/first.txt", "d/second.txt"}


def test_racy_directories_stop_being_relisted_once_older_than_the_margin(tmp_path: Path) -> None:
    now = [time.time_ns()]
    write(tmp_path, {"a/one.txt": "", "b/two.txt": ""})
    scanner = WorkspaceScanner(tmp_path, clock=lambda: now[0])
    files = scanner.scan()
    assert scanner.scan() is files
    assert scanner.last_stats.listed == 3  # all three directories are recent
    now[0] += DEFAULT_RACY_MARGIN_NS + 10**9
    assert scanner.scan() is files
    assert scanner.scan() is files
    assert scanner.last_stats.listed == 0


def test_gitignore_edit_keeping_size_and_mtime_is_seen(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "a.txt\n", "a.txt": "", "b.txt": ""})
    scanner = WorkspaceScanner(tmp_path)
    assert paths(scanner.scan()) == {".gitignore", "b.txt"}
    stat = os.stat(tmp_path / ".gitignore")
    (tmp_path / ".gitignore").write_text("b.txt\n")  # same size
    os.utime(tmp_path / ".gitignore", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert paths(scanner.scan()) == {".gitignore", "a.txt"}


# --- unreadable directories -------------------------------------------------------------------


def run_unprivileged(work: Callable[[], object]) -> object:
    """Run ``work`` as an unprivileged user and return its JSON result.

    As root, permission bits do not stop reads, so the work runs in a forked child that drops to
    uid/gid 65534 (nobody); otherwise it runs in-process.
    """
    if os.geteuid() != 0:
        return json.loads(json.dumps(work()))
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        status = 1
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            with os.fdopen(write_fd, "w") as out:
                json.dump(work(), out)
            status = 0
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd) as result:
        data = result.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "unprivileged child failed"
    return json.loads(data)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A world-traversable temporary directory (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="mini-codex-scan-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for dirpath, _, _ in os.walk(path):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(path)


def test_unreadable_directory_is_skipped_with_a_warning(shared_tmp: Path) -> None:
    write(shared_tmp, {"ok/a.txt": "", "secret/b.txt": "", "c.txt": ""})
    if os.geteuid() == 0:  # the unprivileged child must own "secret" to restore its mode
        for dirpath, dirnames, filenames in os.walk(shared_tmp):
            for name in dirnames + filenames:
                os.chown(os.path.join(dirpath, name), 65534, 65534)
    (shared_tmp / "secret").chmod(0o000)

    def work() -> object:
        scanner = WorkspaceScanner(shared_tmp)
        first = sorted(scanner.scan().paths)
        first_warnings = list(scanner.warnings)
        (shared_tmp / "secret").chmod(0o755)  # the owner may restore it; ctime changes
        second = sorted(scanner.scan().paths)
        return [first, first_warnings, second, list(scanner.warnings)]

    secret = str(shared_tmp / "secret")
    assert run_unprivileged(work) == [
        ["c.txt", "ok/a.txt"],
        [f"cannot list directory {secret!r}: Permission denied"],
        ["c.txt", "ok/a.txt", "secret/b.txt"],
        [],
    ]


# --- symlinks ---------------------------------------------------------------------------------


def test_symlinks_are_listed_as_files_and_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    write(root, {"real/a.txt": ""})
    write(outside, {"x.txt": ""})
    (root / "link_dir").symlink_to(root / "real")
    (root / "link_file").symlink_to(root / "real/a.txt")
    (root / "link_out").symlink_to(outside)
    (root / "dangling").symlink_to(tmp_path / "missing")
    assert paths(WorkspaceScanner(root).scan()) == {
        "real/a.txt",
        "link_dir",
        "link_file",
        "link_out",
        "dangling",
    }


def test_follow_symlinks_stays_inside_root_and_avoids_cycles(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    write(root, {"real/a.txt": ""})
    write(outside, {"x.txt": ""})
    (root / "link_dir").symlink_to(root / "real")
    (root / "real/loop").symlink_to(root)
    (root / "link_out").symlink_to(outside)
    scanner = WorkspaceScanner(root, follow_symlinks=True)
    assert paths(scanner.scan()) == {
        "real/a.txt",
        "real/loop",
        "link_dir/a.txt",
        "link_dir/loop",
        "link_out",
    }
