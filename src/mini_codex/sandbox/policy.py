"""Pure sandbox decisions: which directories a policy lets a command or a file edit write.

* ``danger-full-access``: everything is writable (``WritableRoots.unrestricted``).
* ``read-only``: nothing is writable.
* ``workspace-write``: the cwd, every extra writable root (relative ones are taken relative to the
  cwd) and the per-session temporary directory, if there is one. Inside each root, ``.git`` stays
  read-only (as in Codex): a writable ``.git/hooks`` would let a command run code outside the
  sandbox the next time the user runs git.

Everything here is lexical: no filesystem access. Callers that care about symlinks pass paths they
resolved themselves (``WritableRoots.resolved(os.path.realpath)`` for the roots, ``realpath`` of the
target), so a link that points out of a root is judged by where it points.
What does not belong here: building a bubblewrap command line (``bwrap.py``), running anything
(``exec.py``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import assert_never

from mini_codex.protocol.policy import SandboxPolicy

__all__ = [
    "PROTECTED_SUBDIRS",
    "WritableRoots",
    "is_path_writable",
    "writable_roots",
]

PROTECTED_SUBDIRS: tuple[str, ...] = (".git",)
"""Subdirectories of every writable root that stay read-only."""


def _normalize(path: str | PurePosixPath, base: PurePosixPath | None = None) -> PurePosixPath:
    text = str(path)
    if not posixpath.isabs(text):
        if base is None:
            raise ValueError(f"expected an absolute path, got {text!r}")
        text = posixpath.join(str(base), text)
    return PurePosixPath(posixpath.normpath(text))


@dataclass(frozen=True)
class WritableRoots:
    """The directories a policy lets a command write (absolute, normalized paths)."""

    unrestricted: bool
    """True for ``danger-full-access``: every path is writable and ``roots`` is empty."""
    roots: tuple[PurePosixPath, ...] = ()
    read_only_subpaths: tuple[PurePosixPath, ...] = ()
    """Paths inside a root that stay read-only (``<root>/.git``)."""

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
        target = _normalize(path)
        return any(target == ro or target.is_relative_to(ro) for ro in self.read_only_subpaths)

    def resolved(self, resolve: Callable[[str], str]) -> WritableRoots:
        """The same roots passed through ``resolve`` (the caller's ``os.path.realpath``)."""
        if self.unrestricted:
            return self
        roots = _dedupe(_normalize(resolve(str(root))) for root in self.roots)
        return WritableRoots(
            unrestricted=False,
            roots=roots,
            read_only_subpaths=_protected(roots),
        )


def _dedupe(paths: Iterable[PurePosixPath]) -> tuple[PurePosixPath, ...]:
    return tuple(dict.fromkeys(paths))


def _protected(roots: tuple[PurePosixPath, ...]) -> tuple[PurePosixPath, ...]:
    return tuple(root / sub for root in roots for sub in PROTECTED_SUBDIRS)


def writable_roots(
    policy: SandboxPolicy, cwd: str | PurePosixPath, sandbox_tmp: str | PurePosixPath | None = None
) -> WritableRoots:
    """The writable roots of ``policy`` for a command running in ``cwd`` (absolute)."""
    match policy.mode:
        case "danger-full-access":
            return WritableRoots(unrestricted=True)
        case "read-only":
            return WritableRoots(unrestricted=False)
        case "workspace-write":
            base = _normalize(cwd)
            candidates = [base]
            candidates.extend(_normalize(root, base) for root in policy.writable_roots)
            if sandbox_tmp is not None:
                candidates.append(_normalize(sandbox_tmp))
            roots = _dedupe(candidates)
            return WritableRoots(
                unrestricted=False, roots=roots, read_only_subpaths=_protected(roots)
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
