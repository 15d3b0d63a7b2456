"""Apply a parsed patch to the filesystem, all or nothing, inside the sandbox's writable roots.

1. Plan (reads only): resolve and check every path, compute every new file content in memory
   (later operations see the results of earlier ones), and record the final state per file.
2. Commit: deletions, then writes (each written to a temporary file in the target directory and
   renamed over the target with ``os.replace``; the mode of an existing file is kept, new files
   get ``0o666 & ~umask``). If any step fails, everything done so far is undone (original bytes,
   modes and symlinks restored, created files and directories removed) and nothing is reported
   as changed.

Paths: relative to the cwd; absolute paths and ``..`` components are refused, except under
``danger-full-access``, which writes anywhere (absolute and ``..`` allowed). Every path is judged
by its real location (``os.path.realpath``): a symlinked directory or file that leads out of the
writable roots is refused, ``.git``, ``.mini-codex`` and ``.codex`` inside a root and the
mini-codex home stay read-only, and ``read-only`` refuses all writes. These refusals raise
``PatchOutsideSandboxError``, which the tool may turn into an approval request. An update through
a symlink changes the link's target (inside the roots); a delete removes the link itself.
What does not belong here: patch syntax (``parser.py``), hunk matching (``content.py``).
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, assert_never

import msgspec

from mini_codex.errors import MiniCodexError
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.policy import WritableRoots, writable_roots
from mini_codex.tools.apply_patch.content import HunkMismatchError, apply_chunks
from mini_codex.tools.apply_patch.parser import AddFile, DeleteFile, Patch, UpdateFile

__all__ = [
    "ApplyResult",
    "FileChange",
    "PatchApplyError",
    "PatchOutsideSandboxError",
    "apply_patch",
    "check_patch",
]


class PatchApplyError(MiniCodexError):
    """The patch cannot be applied. The message is meant for the model.

    ``changed_nothing`` is False only when undoing a failed commit failed too.
    """

    def __init__(self, message: str, *, changed_nothing: bool = True) -> None:
        super().__init__(message)
        self.changed_nothing = changed_nothing


class FileChange(msgspec.Struct, frozen=True):
    kind: Literal["A", "M", "D"]
    path: str
    """The path as written in the patch (for a move, the destination)."""


class ApplyResult(msgspec.Struct, frozen=True):
    changes: tuple[FileChange, ...]

    def summary(self) -> str:
        """Codex's success text: ``Success. Updated the following files:`` then ``A/M/D path``."""
        lines = "".join(f"{change.kind} {change.path}\n" for change in self.changes)
        return "Success. Updated the following files:\n" + lines


class _Original(msgspec.Struct, frozen=True):
    """What was at a path before the commit (to undo it)."""

    kind: Literal["missing", "file", "link"]
    data: bytes = b""
    mode: int = 0
    link: str = ""


class PatchOutsideSandboxError(PatchApplyError):
    """The patch writes where the sandbox policy does not allow (the user may approve it)."""


class _Planner:
    def __init__(
        self,
        cwd: Path,
        policy: SandboxPolicy,
        sandbox_tmp: Path | None,
        *,
        tmpdir: str | None = None,
        never_writable: Sequence[Path] = (),
    ) -> None:
        self.policy = policy
        self.cwd = os.path.realpath(cwd)
        tmp = os.path.realpath(sandbox_tmp) if sandbox_tmp is not None else None
        self.roots: WritableRoots = writable_roots(
            policy,
            self.cwd,
            tmp,
            tmpdir=tmpdir,
            never_writable=[str(path) for path in never_writable],
        ).resolved(os.path.realpath)
        self.final: dict[str, bytes | None] = {}
        """Real path -> final content (None: deleted), in order of first touch."""
        self.modes: dict[str, int] = {}
        self.shown: dict[str, str] = {}
        """Real path -> the path as the patch wrote it (for messages)."""

    def resolve(self, path: str, *, follow: bool) -> str:
        if not path.strip():
            raise PatchApplyError("a file operation has an empty path")
        if not self.roots.unrestricted:
            if os.path.isabs(path):
                raise PatchOutsideSandboxError(
                    f"absolute paths are not allowed: '{path}'; use a path relative to {self.cwd}"
                )
            if ".." in Path(path).parts:
                raise PatchOutsideSandboxError(f"'..' is not allowed in patch paths: '{path}'")
        lexical = os.path.normpath(os.path.join(self.cwd, path))
        if follow:
            real = os.path.realpath(lexical)
        else:
            real = os.path.join(os.path.realpath(os.path.dirname(lexical)), Path(lexical).name)
        protector = self.roots.protector(real)
        if protector is not None:
            name = (
                "the mini-codex home" if protector in self.roots.never_writable else protector.name
            )
            raise PatchOutsideSandboxError(
                f"'{path}' is inside {name}, which stays read-only in the sandbox"
            )
        if not self.roots.allows(real):
            where = "" if real == lexical else f" (it resolves to {real})"
            raise PatchOutsideSandboxError(
                f"'{path}' is outside the writable roots of the sandbox{where}"
            )
        self.shown.setdefault(real, path)
        return real

    def exists(self, real: str) -> bool:
        if real in self.final:
            return self.final[real] is not None
        return os.path.lexists(real)

    def read(self, real: str, shown: str) -> bytes:
        if real in self.final:
            data = self.final[real]
            if data is None:
                raise PatchApplyError(
                    f"cannot update '{shown}': it was deleted earlier in the patch"
                )
            return data
        if os.path.isdir(real):
            raise PatchApplyError(f"cannot update '{shown}': it is a directory")
        try:
            with open(real, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            raise PatchApplyError(f"cannot update '{shown}': the file does not exist") from None
        except OSError as exc:
            raise PatchApplyError(f"cannot read '{shown}': {exc.strerror}") from None
        self.modes.setdefault(real, stat.S_IMODE(os.stat(real).st_mode))
        return data

    def add(self, hunk: AddFile) -> FileChange:
        real = self.resolve(hunk.path, follow=True)
        if os.path.isdir(real) and real not in self.final:
            raise PatchApplyError(f"cannot add '{hunk.path}': a directory exists there")
        if real not in self.modes and os.path.isfile(real):
            self.modes[real] = stat.S_IMODE(os.stat(real).st_mode)
        self.final[real] = hunk.contents.encode("utf-8")
        return FileChange("A", hunk.path)

    def delete(self, hunk: DeleteFile) -> FileChange:
        real = self.resolve(hunk.path, follow=False)
        if not self.exists(real):
            raise PatchApplyError(f"cannot delete '{hunk.path}': the file does not exist")
        if real not in self.final and os.path.isdir(real) and not os.path.islink(real):
            raise PatchApplyError(f"cannot delete '{hunk.path}': it is a directory")
        self.final[real] = None
        return FileChange("D", hunk.path)

    def update(self, hunk: UpdateFile) -> FileChange:
        source = self.resolve(hunk.path, follow=True)
        data = self.read(source, hunk.path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise PatchApplyError(f"cannot update '{hunk.path}': it is not UTF-8 text") from None
        try:
            new_text = apply_chunks(text, hunk.chunks, path=hunk.path)
        except HunkMismatchError as exc:
            raise PatchApplyError(str(exc)) from None
        new = new_text.encode("utf-8")
        if hunk.move_to is None:
            self.final[source] = new
            return FileChange("M", hunk.path)
        destination = self.resolve(hunk.move_to, follow=True)
        if os.path.isdir(destination) and destination not in self.final:
            raise PatchApplyError(f"cannot move to '{hunk.move_to}': a directory exists there")
        entry = self.resolve(hunk.path, follow=False)
        if destination != source:
            self.final[entry] = None
            if entry != source:  # a symlink: its target keeps its content, only the link moves
                self.final.pop(source, None)
        if source in self.modes:
            self.modes[destination] = self.modes[source]
        self.final[destination] = new
        return FileChange("M", hunk.move_to)


def _snapshot(real: str) -> _Original:
    if os.path.islink(real):
        return _Original(kind="link", link=os.readlink(real))
    if not os.path.lexists(real):
        return _Original(kind="missing")
    with open(real, "rb") as handle:
        data = handle.read()
    return _Original(kind="file", data=data, mode=stat.S_IMODE(os.stat(real).st_mode))


def _write_atomic(real: str, data: bytes, mode: int | None) -> None:
    directory, name = os.path.split(real)
    temp = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.mini-codex.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
        os.replace(temp, real)
    except BaseException:
        if os.path.lexists(temp):
            os.unlink(temp)
        raise


def _make_parents(real: str, created: list[str]) -> None:
    missing: list[str] = []
    parent = os.path.dirname(real)
    while not os.path.lexists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for directory in reversed(missing):
        os.mkdir(directory)
        created.append(directory)


def _restore(real: str, original: _Original) -> None:
    if os.path.lexists(real) and not os.path.isdir(real):
        os.unlink(real)
    match original.kind:
        case "missing":
            pass
        case "link":
            os.symlink(original.link, real)
        case "file":
            _write_atomic(real, original.data, original.mode)
        case _:
            assert_never(original.kind)


def _commit(planner: _Planner) -> None:
    originals = {real: _snapshot(real) for real in planner.final}
    done: list[str] = []
    created: list[str] = []
    ordered = sorted(planner.final, key=lambda real: planner.final[real] is not None)
    real = ""
    try:
        for real in ordered:
            data = planner.final[real]
            if data is None:
                if originals[real].kind != "missing":
                    os.unlink(real)
                    done.append(real)
            else:
                _make_parents(real, created)
                done.append(real)
                _write_atomic(real, data, planner.modes.get(real))
    except OSError as exc:
        failures = _rollback(done, created, originals)
        message = f"failed to write '{planner.shown.get(real, real)}': {exc.strerror}"
        if failures:
            message += "; undoing the files already written failed for: " + ", ".join(failures)
        raise PatchApplyError(message, changed_nothing=not failures) from None


def _rollback(done: list[str], created: list[str], originals: dict[str, _Original]) -> list[str]:
    failures: list[str] = []
    for real in reversed(done):
        try:
            _restore(real, originals[real])
        except OSError:
            failures.append(real)
    for directory in reversed(created):
        try:
            os.rmdir(directory)
        except OSError:
            failures.append(directory)
    return failures


def apply_patch(
    patch: Patch,
    *,
    cwd: Path,
    policy: SandboxPolicy,
    sandbox_tmp: Path | None = None,
    tmpdir: str | None = None,
    never_writable: Sequence[Path] = (),
) -> ApplyResult:
    """Apply ``patch`` under ``policy``; raise ``PatchApplyError`` (nothing changed) on failure.

    ``PatchOutsideSandboxError`` (a ``PatchApplyError``) means the policy forbids a path: the
    caller may ask the user and apply again under ``danger-full-access``.
    """
    planner, changes = _plan(
        patch,
        cwd=cwd,
        policy=policy,
        sandbox_tmp=sandbox_tmp,
        tmpdir=tmpdir,
        never_writable=never_writable,
    )
    _commit(planner)
    return ApplyResult(changes=tuple(changes))


def check_patch(
    patch: Patch,
    *,
    cwd: Path,
    policy: SandboxPolicy,
    sandbox_tmp: Path | None = None,
    tmpdir: str | None = None,
    never_writable: Sequence[Path] = (),
) -> None:
    """Raise what ``apply_patch`` would raise before writing anything; change nothing."""
    _plan(
        patch,
        cwd=cwd,
        policy=policy,
        sandbox_tmp=sandbox_tmp,
        tmpdir=tmpdir,
        never_writable=never_writable,
    )


def _plan(
    patch: Patch,
    *,
    cwd: Path,
    policy: SandboxPolicy,
    sandbox_tmp: Path | None,
    tmpdir: str | None,
    never_writable: Sequence[Path],
) -> tuple[_Planner, list[FileChange]]:
    if policy.mode == "read-only":
        raise PatchOutsideSandboxError(
            "the sandbox policy is read-only: apply_patch may not change any file"
        )
    if not patch.hunks:
        raise PatchApplyError("the patch contains no file operations")
    planner = _Planner(cwd, policy, sandbox_tmp, tmpdir=tmpdir, never_writable=never_writable)
    changes: list[FileChange] = []
    for hunk in patch.hunks:
        match hunk:
            case AddFile():
                changes.append(planner.add(hunk))
            case DeleteFile():
                changes.append(planner.delete(hunk))
            case UpdateFile():
                changes.append(planner.update(hunk))
            case _:
                assert_never(hunk)
    return planner, changes
