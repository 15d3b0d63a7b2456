"""Incremental scanner of the files under a workspace root, honouring git ignore rules (I/O).

What belongs here: :class:`WorkspaceScanner`, which walks a directory tree with ``os.scandir``
once and afterwards re-lists only directories whose stat changed, producing
:class:`~mini_codex.world_state.workspace_files.WorkspaceFiles` values. Ignore rules are git's:
``.gitignore`` files at every level (a nested file applies to its subtree, patterns relative to its
directory, the nearest file wins), then ``.git/info/exclude``; ``.git`` entries are always skipped
and ``extra_ignores`` (root-relative gitignore patterns) take precedence over everything.

What does not belong here: pattern compilation (``gitignore.py``) and the pure value type and
its rendering (``world_state``).

Incremental rule. Every known directory is re-stat'ed on each scan; only a directory whose
``(st_mtime_ns, st_ctime_ns, st_ino)`` changed is re-listed (new subdirectories are scanned
recursively, vanished ones dropped with their files). Known ``.gitignore`` files are stat'ed too
(editing a file in place does not touch its directory); when one's content changed, its whole
subtree is rescanned. ``.git/info/exclude`` changing rescans everything.

Racy timestamps (git's "racy clean" problem). File-system timestamps are coarse: a file created
in the same clock tick right after a directory was listed can leave the directory's stat
unchanged. Each scan records its start time ``t0`` (before any stat); a directory (or ignore
file) whose mtime and ctime are both ``>= t0 - racy_margin_ns`` when it is listed is re-listed
on the next scan as well, until it is older than that. The default margin is 2 s: it covers
Linux's jiffy-granular timestamps (≤ 10 ms) with a wide safety factor and the 1–2 s granularity
of some file systems (FAT, ext3, HFS+). The cost is bounded: only directories modified in the
last 2 s are re-listed, and a re-list that finds nothing new changes nothing.

When a scan finds no change it returns the very same ``WorkspaceFiles`` object, so downstream
diffs are O(1). Unreadable directories are skipped and reported in :attr:`warnings` (not fatal);
symlinks are listed as files and, unless ``follow_symlinks``, not followed. Followed links must
stay inside the root and never re-enter one of their own ancestors. Paths are always relative to
the root, so nothing outside it can appear.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import msgspec

from mini_codex.discovery.gitignore import MAX_IGNORE_FILE_BYTES, IgnoreRules, RuleChain, decide
from mini_codex.discovery.safe_read import UnsafeFileError, display_path, read_workspace_file
from mini_codex.world_state.workspace_files import WorkspaceFiles

__all__ = ["DEFAULT_RACY_MARGIN_NS", "ScanStats", "WorkspaceScanner"]

DEFAULT_RACY_MARGIN_NS: Final = 2_000_000_000

# Entry kinds; bit 0 says "is a directory".
_FILE: Final = 0
_DIR: Final = 1
_IGNORED_FILE: Final = 2
_IGNORED_DIR: Final = 3
_SKIPPED_FILE: Final = 4
_SKIPPED_DIR: Final = 5

_EXCLUDE: Final = ".git/info/exclude"

_Signature = tuple[int, int, int]
"""``(st_mtime_ns, st_ctime_ns, st_ino)``."""


class ScanStats(msgspec.Struct, frozen=True):
    """What the last :meth:`WorkspaceScanner.scan` did (diagnostics and benchmarks)."""

    directories: int
    """Directories tracked after the scan (each is stat'ed on the next scan)."""
    listed: int
    """Directories listed with ``os.scandir`` during the scan."""
    added: int
    removed: int


class _IgnoreFile(msgspec.Struct):
    signature: _Signature | None
    racy: bool
    data: bytes | None
    rules: IgnoreRules


class _Dir(msgspec.Struct):
    signature: _Signature | None
    """Stat when last listed; None means "list again on the next scan"."""
    racy: bool
    kinds: dict[str, int]
    chain: RuleChain
    """Ignore files that apply to this directory's entries, its own ``.gitignore`` first."""
    ignore: _IgnoreFile | None
    ident: tuple[int, int]


def _signature(st: os.stat_result) -> _Signature:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def _encodable(name: str) -> bool:
    if name.isascii():
        return True
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


class WorkspaceScanner:
    """Lists the files under ``root`` (see the module docstring for the rules)."""

    def __init__(
        self,
        root: Path | str,
        *,
        follow_symlinks: bool = False,
        extra_ignores: Sequence[str] = (".git/",),
        racy_margin_ns: int = DEFAULT_RACY_MARGIN_NS,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        if racy_margin_ns < 0:
            raise ValueError("racy_margin_ns must be >= 0")
        self._root = os.path.abspath(os.fspath(root))
        self._prefix = self._root if self._root.endswith("/") else self._root + "/"
        self._real_root = os.path.realpath(self._root)
        self._follow = follow_symlinks
        self._extra = IgnoreRules(extra_ignores)
        self._margin = racy_margin_ns
        self._clock = clock
        self._threshold = 0
        self._exclude: _IgnoreFile | None = None
        self._dirs: dict[str, _Dir] = {}
        self._files: WorkspaceFiles | None = None
        self._warnings: dict[str, str] = {}
        self._added: set[str] = set()
        self._removed: set[str] = set()
        self._listed = 0
        self._last_stats = ScanStats(0, 0, 0, 0)

    @property
    def root(self) -> Path:
        return Path(self._root)

    @property
    def warnings(self) -> tuple[str, ...]:
        """Problems that currently limit the listing (unreadable directories, bad names)."""
        return tuple(self._warnings[key] for key in sorted(self._warnings))

    @property
    def last_stats(self) -> ScanStats:
        return self._last_stats

    def scan(self) -> WorkspaceFiles:
        """The current file set; the previous object itself when nothing changed."""
        self._threshold = self._clock() - self._margin
        self._added = set()
        self._removed = set()
        self._listed = 0
        try:
            if self._files is None:
                self._exclude = self._read_ignore(self._exclude_path(), _EXCLUDE)
                self._scan_tree("", ())
                self._files = WorkspaceFiles(self._root, self._added)
            else:
                self._refresh()
                if self._added or self._removed:
                    self._files = self._files.with_changes(self._added, self._removed)
            self._last_stats = ScanStats(
                len(self._dirs), self._listed, len(self._added), len(self._removed)
            )
        finally:
            self._added = set()
            self._removed = set()
        return self._files

    # --- incremental refresh ----------------------------------------------------------------

    def _refresh(self) -> None:
        if self._ignore_file_changed(self._exclude_path(), self._exclude):
            self._exclude = self._read_ignore(self._exclude_path(), _EXCLUDE)
            self._drop_tree("")
            self._scan_tree("", ())
            return
        stat = self._stat
        for rel in list(self._dirs):
            entry = self._dirs.get(rel)
            if entry is None:
                continue  # dropped while re-listing a parent
            if entry.ignore is not None and self._ignore_file_changed(
                self._abs(_join(rel, ".gitignore")), entry.ignore
            ):
                self._rescan_tree(rel)
                continue
            try:
                st = stat(self._abs(rel))
            except OSError as exc:
                if rel and isinstance(exc, FileNotFoundError):
                    self._drop_tree(rel, detach=True)
                    continue
                # The root is never dropped: it is re-checked on every scan until it is back.
                self._clear(rel, entry)
                entry.signature = None
                self._warn(rel, self._stat_failure(rel, exc))
                continue
            if entry.racy or entry.signature != _signature(st):
                self._relist(rel, entry, st)

    def _relist(self, rel: str, entry: _Dir, st: os.stat_result) -> None:
        entries = self._list(rel, entry, st)
        if entries is None:
            return
        has_ignore = any(name == ".gitignore" and not is_dir for name, is_dir in entries)
        if has_ignore != (entry.ignore is not None):
            self._rescan_tree(rel)
            return
        old = entry.kinds
        new: dict[str, int] = {}
        for name, is_dir in entries:
            kind = old.get(name)
            if kind is None or (kind & 1) != is_dir:
                kind = self._classify(rel, name, is_dir, entry.chain)
            new[name] = kind
        for name, kind in old.items():
            if new.get(name) != kind:
                self._forget(_join(rel, name), kind)
        entry.kinds = new
        for name, kind in new.items():
            if old.get(name) != kind:
                if kind == _FILE:
                    self._add(_join(rel, name))
                elif kind == _DIR:
                    self._scan_tree(_join(rel, name), entry.chain)

    def _rescan_tree(self, rel: str) -> None:
        parent_chain: RuleChain = ()
        if rel:
            parent = self._dirs.get(rel.rpartition("/")[0])
            if parent is not None:
                parent_chain = parent.chain
        self._drop_tree(rel)
        self._scan_tree(rel, parent_chain)

    # --- full listing -----------------------------------------------------------------------

    def _scan_tree(self, top: str, parent_chain: RuleChain) -> None:
        if top in self._dirs:
            self._drop_tree(top)
        stack: list[tuple[str, RuleChain]] = [(top, parent_chain)]
        while stack:
            rel, chain = stack.pop()
            entry = _Dir(None, False, {}, chain, None, (0, 0))
            self._dirs[rel] = entry
            try:
                st = self._stat(self._abs(rel))
            except OSError as exc:
                if rel == "" or not isinstance(exc, FileNotFoundError):
                    self._warn(rel, self._stat_failure(rel, exc))
                continue
            entry.ident = (st.st_dev, st.st_ino)
            entries = self._list(rel, entry, st)
            if entries is None:
                continue
            if any(name == ".gitignore" and not is_dir for name, is_dir in entries):
                path = _join(rel, ".gitignore")
                ignore = self._read_ignore(self._abs(path), path)
                entry.ignore = ignore
                if ignore is not None and not ignore.rules.empty:
                    entry.chain = ((rel, ignore.rules), *chain)
            kinds = entry.kinds
            for name, is_dir in entries:
                kind = self._classify(rel, name, is_dir, entry.chain)
                kinds[name] = kind
                if kind == _FILE:
                    self._add(_join(rel, name))
                elif kind == _DIR:
                    stack.append((_join(rel, name), entry.chain))

    def _list(self, rel: str, entry: _Dir, st: os.stat_result) -> list[tuple[str, bool]] | None:
        """The entries of a directory stat'ed as ``st`` (stat first, then list: see racy rule)."""
        entry.signature = _signature(st)
        entry.racy = min(st.st_mtime_ns, st.st_ctime_ns) >= self._threshold
        self._listed += 1
        try:
            with os.scandir(self._abs(rel)) as iterator:
                entries = [(e.name, self._is_dir(e, rel)) for e in iterator]
        except OSError as exc:
            self._clear(rel, entry)
            if not isinstance(exc, FileNotFoundError):
                self._warn(rel, f"cannot list directory {self._abs(rel)!r}: {exc.strerror}")
            return None
        self._warnings.pop(rel, None)
        return entries

    def _is_dir(self, entry: os.DirEntry[str], parent_rel: str) -> bool:
        try:
            if entry.is_dir(follow_symlinks=False):
                return True
            if self._follow and entry.is_symlink() and entry.is_dir():
                return self._may_follow(entry.path, parent_rel)
        except OSError:
            return False
        return False

    def _may_follow(self, link: str, parent_rel: str) -> bool:
        """A symlinked directory is followed only inside the root and never into an ancestor."""
        real = os.path.realpath(link)
        if not real.startswith(self._real_root.rstrip("/") + "/"):
            return False
        try:
            st = os.stat(real)
        except OSError:
            return False
        ident = (st.st_dev, st.st_ino)
        rel: str | None = parent_rel
        while rel is not None:
            ancestor = self._dirs.get(rel)
            if ancestor is not None and ancestor.ident == ident:
                return False
            rel = rel.rpartition("/")[0] if rel else None
        return True

    def _classify(self, rel: str, name: str, is_dir: bool, chain: RuleChain) -> int:
        if name == ".git":
            return _IGNORED_DIR if is_dir else _IGNORED_FILE
        path = _join(rel, name)
        if not _encodable(name):
            self._warn(path, f"skipped a name that is not valid UTF-8: {path!r}")
            return _SKIPPED_DIR if is_dir else _SKIPPED_FILE
        verdict = None if self._extra.empty else self._extra.check(path + "/" if is_dir else path)
        if verdict is None and chain:
            verdict = decide(path, is_dir, chain)
        if verdict is None and self._exclude is not None:
            verdict = self._exclude.rules.check(path + "/" if is_dir else path)
        if verdict:
            return _IGNORED_DIR if is_dir else _IGNORED_FILE
        return _DIR if is_dir else _FILE

    # --- ignore files -----------------------------------------------------------------------

    def _exclude_path(self) -> str:
        return self._prefix + _EXCLUDE

    def _read_ignore(self, path: str, warn_key: str | None) -> _IgnoreFile | None:
        """Read an ignore file; None if it does not exist (or is not a file).

        The read never blocks and never leaves the workspace (``safe_read.py``); at most
        :data:`MAX_IGNORE_FILE_BYTES` are read. Problems are reported under ``warn_key`` (the
        file's path relative to the root).
        """
        try:
            st = self._stat(path)
            content = read_workspace_file(path, MAX_IGNORE_FILE_BYTES, boundary=self._real_root)
        except (FileNotFoundError, NotADirectoryError):  # NotADirectory: ``.git`` is a file
            if warn_key is not None:
                self._warnings.pop(warn_key, None)
            return None
        except UnsafeFileError as exc:
            if warn_key is not None:
                self._warn(warn_key, str(exc))
            if exc.transient:
                return _IgnoreFile(None, False, None, IgnoreRules(()))
            # Refused for what it is (a FIFO, a device, outside the root): remember its stat so
            # it is not reopened on every scan.
            return _IgnoreFile(_signature(st), False, b"", IgnoreRules(()))
        except OSError as exc:
            if warn_key is not None:
                self._warn(warn_key, f"cannot read {display_path(path)}: {exc.strerror}")
            return _IgnoreFile(None, False, None, IgnoreRules(()))
        racy = min(st.st_mtime_ns, st.st_ctime_ns) >= self._threshold
        rules = IgnoreRules.from_bytes(content.data, truncated=content.truncated)
        if warn_key is not None:
            if rules.notes:
                shown = display_path(warn_key)
                self._warn(warn_key, f"ignore file {shown}: {'; '.join(rules.notes)}")
            else:
                self._warnings.pop(warn_key, None)
        return _IgnoreFile(_signature(st), racy, content.data, rules)

    def _ignore_file_changed(self, path: str, known: _IgnoreFile | None) -> bool:
        """Whether an ignore file's content differs from ``known`` (None: absent)."""
        try:
            st = self._stat(path)
        except OSError:
            return known is not None
        if known is not None and not known.racy and known.signature == _signature(st):
            return False
        current = self._read_ignore(path, None)
        if current is None or known is None:
            return current is not known
        if current.data != known.data:
            return True
        known.signature, known.racy = current.signature, current.racy
        return False

    # --- bookkeeping ------------------------------------------------------------------------

    def _stat(self, path: str) -> os.stat_result:
        """``os.stat``; a seam for tests that simulate coarse timestamps."""
        return os.stat(path)

    def _abs(self, rel: str) -> str:
        return self._prefix + rel if rel else self._root

    def _add(self, path: str) -> None:
        if path in self._removed:
            self._removed.discard(path)
        else:
            self._added.add(path)

    def _remove(self, path: str) -> None:
        if path in self._added:
            self._added.discard(path)
        else:
            self._removed.add(path)

    def _forget(self, path: str, kind: int) -> None:
        if kind == _FILE:
            self._remove(path)
        elif kind == _DIR:
            self._drop_tree(path)
        else:
            self._warnings.pop(path, None)

    def _clear(self, rel: str, entry: _Dir) -> None:
        """Forget a directory's contents (it could not be listed)."""
        for name, kind in entry.kinds.items():
            self._forget(_join(rel, name), kind)
        entry.kinds = {}

    def _drop_tree(self, top: str, *, detach: bool = False) -> None:
        stack = [top]
        while stack:
            rel = stack.pop()
            entry = self._dirs.pop(rel, None)
            self._warnings.pop(rel, None)
            if entry is None:
                continue
            if entry.ignore is not None:
                self._warnings.pop(_join(rel, ".gitignore"), None)
            for name, kind in entry.kinds.items():
                path = _join(rel, name)
                if kind == _DIR:
                    stack.append(path)
                else:
                    self._forget(path, kind)
        if detach and top:
            parent_rel, _, name = top.rpartition("/")
            parent = self._dirs.get(parent_rel)
            if parent is not None:
                parent.kinds.pop(name, None)

    def _stat_failure(self, rel: str, exc: OSError) -> str:
        if rel == "":
            return f"cannot read workspace root {self._root!r}: {exc.strerror}"
        return f"cannot stat directory {self._abs(rel)!r}: {exc.strerror}"

    def _warn(self, key: str, message: str) -> None:
        self._warnings[key] = message
