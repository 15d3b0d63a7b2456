"""Applying patches to real files: operations, all-or-nothing, escapes refused, modes kept."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.tools.apply_patch import (
    ApplyResult,
    FileChange,
    PatchApplyError,
    apply_patch,
    parse_patch,
)

# The tests' "outside" directories live under /tmp (pytest's tmp_path): keep /tmp read-only.
WORKSPACE = SandboxPolicy.workspace_write(exclude_slash_tmp=True)


def run(
    cwd: Path,
    *lines: str,
    policy: SandboxPolicy = WORKSPACE,
    sandbox_tmp: Path | None = None,
) -> ApplyResult:
    text = "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"
    return apply_patch(parse_patch(text), cwd=cwd, policy=policy, sandbox_tmp=sandbox_tmp)


def refused(cwd: Path, *lines: str, policy: SandboxPolicy = WORKSPACE) -> str:
    with pytest.raises(PatchApplyError) as caught:
        run(cwd, *lines, policy=policy)
    assert caught.value.changed_nothing
    return str(caught.value)


def tree(root: Path) -> dict[str, str]:
    """Every file (and symlink target) under ``root`` with its text."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = path.read_bytes().decode("utf-8", "replace")
    return out


def test_add_update_delete_and_move_report_each_file(tmp_path: Path) -> None:
    (tmp_path / "mod.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "name.txt").write_text("alpha\nbeta\n")
    result = run(
        tmp_path,
        "*** Add File: nested/new.txt",
        "+created",
        "*** Update File: mod.txt",
        "@@",
        " one",
        "-two",
        "+TWO",
        "*** Delete File: gone.txt",
        "*** Update File: old/name.txt",
        "*** Move to: renamed/dir/name.txt",
        "@@",
        "-beta",
        "+gamma",
    )
    assert result == ApplyResult(
        changes=(
            FileChange("A", "nested/new.txt"),
            FileChange("M", "mod.txt"),
            FileChange("D", "gone.txt"),
            FileChange("M", "renamed/dir/name.txt"),
        )
    )
    assert result.summary() == (
        "Success. Updated the following files:\n"
        "A nested/new.txt\nM mod.txt\nD gone.txt\nM renamed/dir/name.txt\n"
    )
    assert tree(tmp_path) == {
        "mod.txt": "one\nTWO\nthree\n",
        "nested/new.txt": "created\n",
        "renamed/dir/name.txt": "alpha\ngamma\n",
    }


def test_later_operations_see_earlier_ones_in_the_same_patch(tmp_path: Path) -> None:
    run(
        tmp_path,
        "*** Add File: a.txt",
        "+first",
        "*** Update File: a.txt",
        "@@",
        "-first",
        "+second",
        "*** Add File: temp.txt",
        "+x",
        "*** Delete File: temp.txt",
    )
    assert tree(tmp_path) == {"a.txt": "second\n"}


def test_whitespace_tolerant_context_applies(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("def f():\n    return 1  \n")
    run(tmp_path, "*** Update File: f.py", "@@ def f():", "-  return 1", "+    return 2")
    assert (tmp_path / "f.py").read_text() == "def f():\n    return 2\n"


def test_a_failing_second_file_leaves_the_first_untouched(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    before = tree(tmp_path)
    message = refused(
        tmp_path,
        "*** Update File: a.txt",
        "-a",
        "+A",
        "*** Add File: new.txt",
        "+new",
        "*** Update File: b.txt",
        "-not there",
        "+B",
    )
    assert "Failed to find the expected lines in b.txt (hunk 1, patch line 8)" in message
    assert "not there" in message
    assert tree(tmp_path) == before


def test_a_write_failure_midway_rolls_back_what_was_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "gone.txt").write_text("g\n")
    (tmp_path / "blocker").write_text("a file where the patch expects a directory\n")
    before = tree(tmp_path)
    with pytest.raises(PatchApplyError) as caught:
        run(
            tmp_path,
            "*** Update File: a.txt",
            "-a",
            "+A",
            "*** Delete File: gone.txt",
            "*** Add File: fresh/dir/new.txt",
            "+new",
            "*** Add File: blocker/c.txt",
            "+C",
        )
    assert str(caught.value) == "failed to write 'blocker/c.txt': Not a directory"
    assert caught.value.changed_nothing
    assert tree(tmp_path) == before
    assert not (tmp_path / "fresh").exists()


def test_file_modes_are_preserved_and_new_files_follow_the_umask(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o751)
    run(
        tmp_path,
        "*** Update File: run.sh",
        "-echo 1",
        "+echo 2",
        "*** Add File: new.txt",
        "+x",
    )
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~umask
    run(tmp_path, "*** Update File: run.sh", "*** Move to: bin/run.sh", "-echo 2", "+echo 3")
    assert stat.S_IMODE((tmp_path / "bin" / "run.sh").stat().st_mode) == 0o751


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (("*** Add File: ../escape.txt", "+x"), "'..' is not allowed in patch paths: '../escape"),
        (("*** Add File: a/../../escape.txt", "+x"), "'..' is not allowed in patch paths"),
        (("*** Delete File: /etc/hostname",), "absolute paths are not allowed: '/etc/hostname'"),
        (("*** Update File: f", "*** Move to: ../f", "-x"), "'..' is not allowed"),
        (("*** Add File: .git/hooks/pre-commit", "+x"), "inside .git, which stays read-only"),
    ],
)
def test_paths_leaving_the_workspace_are_refused(
    tmp_path: Path, lines: tuple[str, ...], expected: str
) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / "f").write_text("x\n")
    assert expected in refused(workspace, *lines)
    assert tree(tmp_path) == {"ws/f": "x\n"}


def test_symlinked_directory_pointing_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    message = refused(workspace, "*** Add File: link/evil.txt", "+x")
    assert message == (
        f"'link/evil.txt' is outside the writable roots of the sandbox "
        f"(it resolves to {os.path.realpath(outside)}/evil.txt)"
    )
    assert list(outside.iterdir()) == []


def test_symlinked_file_pointing_outside_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("keep\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "innocent.txt").symlink_to(secret)
    assert "outside the writable roots" in refused(
        workspace, "*** Update File: innocent.txt", "-keep", "+pwned"
    )
    assert "outside the writable roots" in refused(workspace, "*** Add File: innocent.txt", "+x")
    assert secret.read_text() == "keep\n"


def test_symlinks_inside_the_workspace_are_followed_for_updates_and_removed_on_delete(
    tmp_path: Path,
) -> None:
    (tmp_path / "real.txt").write_text("v1\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    run(tmp_path, "*** Update File: alias.txt", "-v1", "+v2")
    assert tree(tmp_path) == {"alias.txt": "-> real.txt", "real.txt": "v2\n"}
    run(tmp_path, "*** Delete File: alias.txt")
    assert tree(tmp_path) == {"real.txt": "v2\n"}


def test_read_only_policy_refuses_every_write(tmp_path: Path) -> None:
    message = refused(tmp_path, "*** Add File: a.txt", "+x", policy=SandboxPolicy.read_only())
    assert message == "the sandbox policy is read-only: apply_patch may not change any file"
    assert tree(tmp_path) == {}


def test_writable_roots_and_the_session_tmp_accept_writes_through_links(tmp_path: Path) -> None:
    workspace, extra, session_tmp = tmp_path / "ws", tmp_path / "extra", tmp_path / "tmp"
    for directory in (workspace, extra, session_tmp):
        directory.mkdir()
    (workspace / "extra").symlink_to(extra)
    (workspace / "scratch").symlink_to(session_tmp)
    policy = SandboxPolicy.workspace_write((str(extra),))
    result = apply_patch(
        parse_patch(
            "*** Begin Patch\n*** Add File: extra/a.txt\n+a\n"
            "*** Add File: scratch/b.txt\n+b\n*** End Patch\n"
        ),
        cwd=workspace,
        policy=policy,
        sandbox_tmp=session_tmp,
    )
    assert [change.path for change in result.changes] == ["extra/a.txt", "scratch/b.txt"]
    assert (extra / "a.txt").read_text() == "a\n"
    assert (session_tmp / "b.txt").read_text() == "b\n"


def test_danger_full_access_writes_absolute_paths_anywhere(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "file.txt"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    run(
        workspace,
        f"*** Add File: {target}",
        "+free",
        "*** Add File: ../sibling.txt",
        "+also",
        policy=SandboxPolicy.danger_full_access(),
    )
    assert target.read_text() == "free\n"
    assert (tmp_path / "sibling.txt").read_text() == "also\n"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (("*** Update File: missing.txt", "-a", "+b"), "cannot update 'missing.txt': the file"),
        (("*** Delete File: missing.txt",), "cannot delete 'missing.txt': the file does not exist"),
        (("*** Delete File: dir",), "cannot delete 'dir': it is a directory"),
        (("*** Add File: dir", "+x"), "cannot add 'dir': a directory exists there"),
        (("*** Update File: binary.bin", "-a", "+b"), "'binary.bin': it is not UTF-8 text"),
    ],
)
def test_impossible_operations_explain_themselves(
    tmp_path: Path, lines: tuple[str, ...], expected: str
) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "binary.bin").write_bytes(b"\xff\xfe\x00")
    before = tree(tmp_path)
    assert expected in refused(tmp_path, *lines)
    assert tree(tmp_path) == before


def test_an_empty_patch_changes_nothing(tmp_path: Path) -> None:
    assert refused(tmp_path) == "the patch contains no file operations"
