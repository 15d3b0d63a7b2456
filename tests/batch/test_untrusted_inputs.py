"""Task files and archives are untrusted: nothing is written outside the task's copy, no file the
task names reaches the model unless it is an image, no workspace copies the machine.

Reproductions (each failed on the old code): tar members that escape the workspace (``../``, an
absolute path, a symlink out and a file through it, a hardlink to a file outside — which let a
sandboxed ``echo >> hl`` append to that file); ``/etc/passwd`` as a task image (it was sent to the
model as ``application/octet-stream``); a workspace ``dir`` holding a FIFO (the copy blocked for
good, as on ``/proc/kmsg`` through a symlink to ``/``).
"""

from __future__ import annotations

import io
import os
import tarfile
import time
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from batch_helpers import answer, results, shell, spec, write_script

from mini_codex.batch import LocalExecutor, ResultStore, Task, Workspace, run_batch
from mini_codex.batch.workspace import WorkspaceError, check_workspace_dir, prepare_workspace


def _tar(path: Path, *members: tuple[tarfile.TarInfo, bytes | None]) -> Path:
    with tarfile.open(path, "w") as archive:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes = b"pwned\n") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _link(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def _run(tmp_path: Path, workspace: Workspace, steps: list[dict], **task: object) -> dict:  # type: ignore[type-arg]
    out = tmp_path / "out"
    model = write_script(tmp_path / "script.jsonl", steps)
    base = spec("t", model, tmp_path, str(out))
    job = replace(base, task=Task(id="t", prompt="p", workspace=workspace, **task))  # type: ignore[arg-type]
    anyio.run(lambda: run_batch([job], ResultStore(str(out)), LocalExecutor(1)))
    [record] = results(out)
    return record


@pytest.mark.parametrize(
    "members",
    [
        pytest.param(lambda outside: [_file("../escape.txt")], id="dotdot"),
        pytest.param(
            lambda outside: [_link("out", str(outside), tarfile.SYMTYPE), _file("out/via.txt")],
            id="symlink-out",
        ),
        pytest.param(
            lambda outside: [_link("up", "../..", tarfile.SYMTYPE), _file("up/via.txt")],
            id="relative-symlink-out",
        ),
        pytest.param(
            lambda outside: [_link("hl", str(outside / "secret.txt"), tarfile.LNKTYPE)],
            id="hardlink-out",
        ),
        pytest.param(
            lambda outside: [_file("dev"), _link("fifo", "", tarfile.FIFOTYPE)], id="fifo"
        ),
    ],
)
def test_an_archive_member_that_escapes_is_refused(tmp_path: Path, members: object) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    before = sorted((p.relative_to(tmp_path), p.read_bytes()) for p in outside.iterdir())
    archive = _tar(tmp_path / "a.tar", *members(outside))  # type: ignore[operator]
    target = tmp_path / "deep" / "er" / "workspace"
    with pytest.raises(WorkspaceError, match="refused member"):
        prepare_workspace(Workspace("archive", str(archive)), target, {})
    after = sorted((p.relative_to(tmp_path), p.read_bytes()) for p in outside.iterdir())
    assert after == before
    assert not (tmp_path / "deep" / "escape.txt").exists()
    assert not (tmp_path / "deep" / "er" / "escape.txt").exists()


def test_an_absolute_member_lands_inside_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    archive = _tar(tmp_path / "a.tar", _file(str(outside / "abs.txt")))
    target = prepare_workspace(Workspace("archive", str(archive)), tmp_path / "ws", {})
    assert not outside.exists()  # the leading "/" is stripped, as Python's data filter does
    inside = target / str(outside / "abs.txt").lstrip("/")
    assert inside.read_bytes() == b"pwned\n"


def test_a_hardlink_member_cannot_append_to_a_file_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("original\n")
    archive = _tar(
        tmp_path / "hl.tar",
        _file("app.txt", b"v1\n"),
        _link("hl", str(outside), tarfile.LNKTYPE),
    )
    record = _run(
        tmp_path,
        Workspace("archive", str(archive)),
        [shell("echo appended >> hl"), answer("done")],
    )
    assert outside.read_text() == "original\n"
    assert record["status"] == "error"
    assert record["error"].startswith(f"workspace archive {archive}: refused member: ")


def test_a_safe_tar_archive_still_unpacks(tmp_path: Path) -> None:
    archive = _tar(
        tmp_path / "ok.tar",
        _file("src/app.txt", b"v1\n"),
        _link("src/alias.txt", "app.txt", tarfile.SYMTYPE),
        _link("src/same.txt", "src/app.txt", tarfile.LNKTYPE),
    )
    target = prepare_workspace(Workspace("archive", str(archive)), tmp_path / "ws", {})
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == [
        "src",
        "src/alias.txt",
        "src/app.txt",
        "src/same.txt",
    ]
    assert (target / "src" / "alias.txt").read_text() == "v1\n"


def test_a_task_image_that_is_not_an_image_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    record = _run(
        tmp_path,
        Workspace("dir", str(tmp_path / "ws")),
        [answer("I read it")],
        images=("/etc/passwd",),
    )
    assert (record["status"], record["error"]) == (
        "error",
        "image /etc/passwd: unsupported format (expected PNG, JPEG, GIF or WebP)",
    )


@pytest.fixture
def workspace_dir(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def test_a_workspace_dir_copies_regular_files_and_directories_only(
    tmp_path: Path, workspace_dir: Path
) -> None:
    (workspace_dir / "sub").mkdir()
    (workspace_dir / "sub" / "a.txt").write_text("a\n")
    os.mkfifo(workspace_dir / "pipe")  # reading it blocks until a writer comes: never
    (workspace_dir / "etc").symlink_to("/etc")
    (workspace_dir / "passwd").symlink_to("/etc/passwd")
    started = time.monotonic()
    target = prepare_workspace(Workspace("dir", str(workspace_dir)), tmp_path / "copy", {})
    assert time.monotonic() - started < 30
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == ["sub", "sub/a.txt"]


def test_a_workspace_dir_that_is_root_or_home_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home" / "me"
    (home / "project").mkdir(parents=True)
    to_root = tmp_path / "root-link"
    to_root.symlink_to("/")
    to_home = tmp_path / "home-link"
    to_home.symlink_to(home)
    refused = {
        str(to_root): f"workspace dir {to_root} is /: a task may not copy the root or home "
        "directory",
        str(to_home): f"workspace dir {to_home} is {home}: a task may not copy the root or home "
        "directory",
        str(tmp_path / "home"): f"workspace dir {tmp_path / 'home'} is {tmp_path / 'home'}: a task "
        "may not copy the root or home directory",
        "/proc/self": f"workspace dir /proc/self is {Path('/proc/self').resolve()}: a system "
        "directory",
        "/dev": "workspace dir /dev is /dev: a system directory",
    }
    for source, message in refused.items():
        with pytest.raises(WorkspaceError) as error:
            check_workspace_dir(Path(source), home)
        assert str(error.value) == message
    assert check_workspace_dir(home / "project", home) == home / "project"


def test_a_symlink_to_root_as_a_task_workspace_fails_at_once(tmp_path: Path) -> None:
    to_root = tmp_path / "root-link"
    to_root.symlink_to("/")
    started = time.monotonic()
    record = _run(tmp_path, Workspace("dir", str(to_root)), [answer("done")])
    assert time.monotonic() - started < 60
    assert (record["status"], record["error"]) == (
        "error",
        f"workspace dir {to_root} is /: a task may not copy the root or home directory",
    )
