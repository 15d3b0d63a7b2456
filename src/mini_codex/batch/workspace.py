"""A task's fresh workspace: copy, clone or unpack it, snapshot its start, and diff against it.

The start snapshot is a commit in a *separate* git directory outside the workspace (so the agent
sees exactly the files it was given, and a ``git`` workspace keeps its own repository untouched);
the diff is what ``git add -A`` then ``git diff --cached`` shows against that commit: changed, new
and deleted files, honouring ``.gitignore`` like git does. Git runs with a fixed identity and
prefixes so the patch has the same shape everywhere (SWE-bench's ``model_patch``).

Everything here is blocking (subprocess, file copies); the job runs it in a worker thread.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from mini_codex.batch.tasks import Workspace
from mini_codex.errors import MiniCodexError

__all__ = ["WorkspaceError", "diff_against_start", "prepare_workspace", "snapshot_start"]

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


def prepare_workspace(spec: Workspace, target: Path, env: Mapping[str, str]) -> Path:
    """Make ``target`` a fresh copy of ``spec``'s source; returns ``target``."""
    source = spec.source
    match spec.kind:
        case "dir":
            if not Path(source).is_dir():
                raise WorkspaceError(f"workspace dir {source}: not a directory")
            shutil.copytree(source, target, symlinks=True)
        case "archive":
            if not Path(source).is_file():
                raise WorkspaceError(f"workspace archive {source}: not a file")
            target.mkdir(parents=True)
            try:
                shutil.unpack_archive(source, target)
            except (ValueError, OSError, EOFError) as exc:
                raise WorkspaceError(f"workspace archive {source}: {exc}") from None
        case "git":
            _git(["clone", "--quiet", source, str(target)], cwd=None, env=env)
            if spec.commit is not None:
                _git(["checkout", "--quiet", "--detach", spec.commit], cwd=target, env=env)
    return target


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
