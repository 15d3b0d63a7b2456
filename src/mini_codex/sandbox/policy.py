"""Pure sandbox decisions: which directories a policy lets a command or a file edit write.

* ``danger-full-access``: everything is writable (``WritableRoots.unrestricted``).
* ``read-only``: nothing is writable.
* ``workspace-write``: the cwd, every extra writable root (relative ones are taken relative to the
  cwd), the per-session temporary directory if there is one, ``$TMPDIR`` (unless
  ``exclude_tmpdir_env_var``) and ``/tmp`` (unless ``exclude_slash_tmp``). Inside each root,
  ``.git``, ``.mini-codex`` and ``.codex`` stay read-only (as in Codex): a writable ``.git/hooks``
  would let a command run code outside the sandbox the next time the user runs git.
* Under every restricted policy, the ``never_writable`` paths (``$MINI_CODEX_HOME``: config, rules,
  sessions) stay read-only even inside a writable root: a command that rewrote ``config.toml``
  would get ``danger-full-access`` on the next start.

Everything here is lexical: no filesystem access. Callers that care about symlinks pass paths they
resolved themselves (``WritableRoots.resolved(os.path.realpath)`` for the roots, ``realpath`` of the
target), so a link that points out of a root is judged by where it points.
What does not belong here: building a bubblewrap command line (``bwrap.py``), running anything
(``exec.py``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import assert_never

import msgspec

from mini_codex.protocol.policy import SandboxPolicy

__all__ = [
    "PROTECTED_SUBDIRS",
    "SLASH_TMP",
    "WritableRoots",
    "is_path_writable",
    "writable_roots",
]

PROTECTED_SUBDIRS: tuple[str, ...] = (".git", ".mini-codex", ".codex")
"""Subdirectories of every writable root that stay read-only."""

SLASH_TMP = "/tmp"


def _normalize(path: str | PurePosixPath, base: PurePosixPath | None = None) -> PurePosixPath:
    text = str(path)
    if not posixpath.isabs(text):
        if base is None:
            raise ValueError(f"expected an absolute path, got {text!r}")
        text = posixpath.join(str(base), text)
    return PurePosixPath(posixpath.normpath(text))


class WritableRoots(msgspec.Struct, frozen=True):
    """The directories a policy lets a command write (absolute, normalized paths)."""

    unrestricted: bool
    """True for ``danger-full-access``: every path is writable and ``roots`` is empty."""
    roots: tuple[PurePosixPath, ...] = ()
    read_only_subpaths: tuple[PurePosixPath, ...] = ()
    """Paths inside a root that stay read-only (``<root>/.git``)."""
    never_writable: tuple[PurePosixPath, ...] = ()
    """Paths that stay read-only wherever they are (``$MINI_CODEX_HOME``)."""

    def allows(self, path: str | PurePosixPath) -> bool:
        """Whether ``path`` (absolute) may be written under these roots."""
        if self.unrestricted:
            return True
        target = _normalize(path)
        if self.is_protected(target):
            return False
        return any(target.is_relative_to(root) for root in self.roots)

    def is_protected(self, path: str | PurePosixPath) -> bool:
        """Whether ``path`` (absolute) is inside a read-only subpath such as ``<root>/.git``."""
        return self.protector(path) is not None

    def protector(self, path: str | PurePosixPath) -> PurePosixPath | None:
        """The read-only subpath or never-writable path that contains ``path``, if any."""
        target = _normalize(path)
        for protected in (*self.read_only_subpaths, *self.never_writable):
            if target == protected or target.is_relative_to(protected):
                return protected
        return None

    def resolved(self, resolve: Callable[[str], str]) -> WritableRoots:
        """The same roots passed through ``resolve`` (the caller's ``os.path.realpath``)."""
        if self.unrestricted:
            return self
        roots = _dedupe(_normalize(resolve(str(root))) for root in self.roots)
        never = _dedupe(_normalize(resolve(str(path))) for path in self.never_writable)
        return WritableRoots(
            unrestricted=False,
            roots=roots,
            read_only_subpaths=_protected(roots),
            never_writable=never,
        )


def _dedupe(paths: Iterable[PurePosixPath]) -> tuple[PurePosixPath, ...]:
    return tuple(dict.fromkeys(paths))


def _protected(roots: tuple[PurePosixPath, ...]) -> tuple[PurePosixPath, ...]:
    return tuple(root / sub for root in roots for sub in PROTECTED_SUBDIRS)


def writable_roots(
    policy: SandboxPolicy,
    cwd: str | PurePosixPath,
    sandbox_tmp: str | PurePosixPath | None = None,
    *,
    tmpdir: str | None = None,
    never_writable: Iterable[str | PurePosixPath] = (),
) -> WritableRoots:
    """The writable roots of ``policy`` for a command running in ``cwd`` (absolute).

    ``tmpdir`` is the command's ``$TMPDIR`` (ignored unless absolute); ``never_writable`` are
    paths no restricted command may write (``$MINI_CODEX_HOME``).
    """
    never = _dedupe(_normalize(path) for path in never_writable)
    match policy.mode:
        case "danger-full-access":
            return WritableRoots(unrestricted=True)
        case "read-only":
            return WritableRoots(unrestricted=False, never_writable=never)
        case "workspace-write":
            base = _normalize(cwd)
            candidates = [base]
            candidates.extend(_normalize(root, base) for root in policy.writable_roots)
            if sandbox_tmp is not None:
                candidates.append(_normalize(sandbox_tmp))
            if tmpdir and posixpath.isabs(tmpdir) and not policy.exclude_tmpdir_env_var:
                candidates.append(_normalize(tmpdir))
            if not policy.exclude_slash_tmp:
                candidates.append(PurePosixPath(SLASH_TMP))
            roots = _dedupe(candidates)
            return WritableRoots(
                unrestricted=False,
                roots=roots,
                read_only_subpaths=_protected(roots),
                never_writable=never,
            )
        case _:
            assert_never(policy.mode)


def is_path_writable(
    policy: SandboxPolicy,
    cwd: str | PurePosixPath,
    path: str | PurePosixPath,
    sandbox_tmp: str | PurePosixPath | None = None,
) -> bool:
    """Whether ``path`` (absolute, or relative to ``cwd``) may be written under ``policy``.

    Lexical: pass realpath-resolved ``cwd``, ``sandbox_tmp`` and ``path`` to judge symlinks.
    """
    target = _normalize(path, _normalize(cwd))
    return writable_roots(policy, cwd, sandbox_tmp).allows(target)
