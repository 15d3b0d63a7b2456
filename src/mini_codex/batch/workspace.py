"""A task's fresh workspace: copy, clone or unpack it, snapshot its start, and diff against it.

The start snapshot is a commit in a *separate* git directory outside the workspace (so the agent
sees exactly the files it was given, and a ``git`` workspace keeps its own repository untouched);
the diff is what ``git add -A`` then ``git diff --cached`` shows against that commit: changed, new
and deleted files, honouring ``.gitignore`` like git does. Git runs with a fixed identity and
prefixes so the patch has the same shape everywhere (SWE-bench's ``model_patch``).

Task files are untrusted input (docs: README "Security notes"). What a workspace may be:

* ``dir``: resolved (symlinks followed) and refused when it is ``/``, the home directory or one of
  its ancestors, under ``/proc``, ``/sys``, ``/dev`` or ``/run``, or not a directory. Only regular
  files and directories are copied (symlinks, devices, FIFOs and sockets are left out), so a
  link to ``/`` or a ``/proc`` file cannot make the copy read the machine or block forever.
* ``archive``: zip members as ``shutil`` unpacks them (already confined); tar members through
  Python's ``filter="data"`` (no absolute or ``..`` paths, no devices or FIFOs, no symlink or
  hardlink that points outside the workspace, no set-uid bits); a refused member fails the task.

Everything here is blocking (subprocess, file copies); the job runs it in a worker thread.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tarfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from mini_codex.batch.tasks import Workspace
from mini_codex.errors import MiniCodexError

__all__ = [
    "PreparationInterrupted",
    "WorkspaceError",
    "check_workspace_dir",
    "diff_against_start",
    "prepare_workspace",
    "snapshot_start",
]

_SYSTEM_TREES = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/run"))

_GIT_CONFIG = (
    "-c", "user.name=mini-codex batch",
    "-c", "user.email=batch@mini-codex.invalid",
    "-c", "commit.gpgsign=false",
    "-c", "core.autocrlf=false",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "core.quotepath=true",
)  # fmt: skip


class WorkspaceError(MiniCodexError):
    """A workspace could not be prepared or diffed."""


class PreparationInterrupted(WorkspaceError):
    """The user aborted the batch while this workspace was being prepared."""


def _check(cancelled: threading.Event | None) -> None:
    if cancelled is not None and cancelled.is_set():
        raise PreparationInterrupted("interrupted while the workspace was prepared")


def prepare_workspace(
    spec: Workspace,
    target: Path,
    env: Mapping[str, str],
    cancelled: threading.Event | None = None,
) -> Path:
    """Make ``target`` a fresh copy of ``spec``'s source; returns ``target``.

    ``cancelled`` (set from another thread) stops the copy between files, archive members and
    git steps, with ``PreparationInterrupted``."""
    source = spec.source
    match spec.kind:
        case "dir":
            _copy_tree(check_workspace_dir(Path(source), Path.home()), target, cancelled)
        case "archive":
            if not Path(source).is_file():
                raise WorkspaceError(f"workspace archive {source}: not a file")
            target.mkdir(parents=True)
            _unpack(Path(source), target, cancelled)
        case "git":
            _git(["clone", "--quiet", source, str(target)], cwd=None, env=env)
            _check(cancelled)
            if spec.commit is not None:
                _git(["checkout", "--quiet", "--detach", spec.commit], cwd=target, env=env)
    _check(cancelled)
    return target


def check_workspace_dir(source: Path, home: Path) -> Path:
    """The directory a ``dir`` workspace copies, resolved; refused as the module docs say."""
    try:
        resolved = source.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise WorkspaceError(f"workspace dir {source}: {exc}") from None
    home = home.resolve()
    if resolved == Path("/") or resolved == home or home.is_relative_to(resolved):
        raise WorkspaceError(
            f"workspace dir {source} is {resolved}: a task may not copy the root or home directory"
        )
    if any(resolved.is_relative_to(tree) for tree in _SYSTEM_TREES):
        raise WorkspaceError(f"workspace dir {source} is {resolved}: a system directory")
    if not resolved.is_dir():
        raise WorkspaceError(f"workspace dir {source}: not a directory")
    return resolved


def _copy_tree(source: Path, target: Path, cancelled: threading.Event | None = None) -> None:
    """Copy the regular files and directories under ``source`` (nothing else; no link followed)."""
    target.mkdir(parents=True)
    shutil.copystat(source, target)
    with os.scandir(source) as entries:
        for entry in entries:
            _check(cancelled)
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                _copy_tree(Path(entry.path), target / entry.name, cancelled)
            elif stat.S_ISREG(mode):
                shutil.copy2(entry.path, target / entry.name, follow_symlinks=False)


def _unpack(source: Path, target: Path, cancelled: threading.Event | None = None) -> None:
    try:
        if tarfile.is_tarfile(source):
            if not hasattr(tarfile, "data_filter"):  # Python 3.11.0-3.11.3
                raise WorkspaceError(
                    f"workspace archive {source}: tar archives need Python 3.11.4 or later "
                    "(tarfile's data filter)"
                )

            def checked(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
                _check(cancelled)
                return tarfile.data_filter(member, path)

            with tarfile.open(source) as archive:
                archive.extractall(target, filter=checked)
        else:
            shutil.unpack_archive(source, target)
    except tarfile.FilterError as exc:
        raise WorkspaceError(f"workspace archive {source}: refused member: {exc}") from None
    except (ValueError, OSError, EOFError, tarfile.TarError) as exc:
        raise WorkspaceError(f"workspace archive {source}: {exc}") from None


def snapshot_start(workspace: Path, git_dir: Path, env: Mapping[str, str]) -> None:
    """Commit the workspace as it is now into ``git_dir`` (outside the workspace)."""
    base = _tree_args(workspace, git_dir)
    _git(["init", "--quiet", "--bare", str(git_dir)], cwd=None, env=env)
    _git([*base, "add", "-A"], cwd=workspace, env=env)
    _git(
        [*base, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "start"], workspace, env
    )


def diff_against_start(workspace: Path, git_dir: Path, env: Mapping[str, str]) -> str:
    """``git add -A`` then ``git diff --cached`` against the start commit."""
    base = _tree_args(workspace, git_dir)
    _git([*base, "add", "-A"], cwd=workspace, env=env)
    return _git(
        [*base, "diff", "--cached", "--no-color", "--no-ext-diff", "HEAD"], cwd=workspace, env=env
    )


def _tree_args(workspace: Path, git_dir: Path) -> list[str]:
    return [f"--git-dir={git_dir}", f"--work-tree={workspace}"]


def _git(args: Sequence[str], cwd: Path | None, env: Mapping[str, str]) -> str:
    command = ["git", *_GIT_CONFIG, *args]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env={**env, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"},
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise WorkspaceError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        detail = message[-1] if message else f"exit {done.returncode}"
        verb = next((arg for arg in args if not arg.startswith("-")), "")
        raise WorkspaceError(f"git {verb}: {detail}")
    return done.stdout.decode(errors="replace")
