"""The set of files under a workspace root, as immutable values (pure).

What belongs here: :class:`WorkspaceFiles`, the live value a scanner produces (root + the POSIX
relative paths of the files under it), and :class:`PersistedWorkspace`, the bounded form that is
decoded from a rollout entry (it may list only a prefix of the paths). Both carry an
order-independent digest so two values can be compared without their full path sets.

What does not belong here: walking a file system (``mini_codex.discovery.workspace``) and
rendering or encoding for the model (``world_state.sections.workspace``).

Costs. Values are built once per change, so everything a step needs when nothing changed is O(1):
the digest is computed lazily and then updated in O(changes) by :meth:`WorkspaceFiles.with_changes`;
a derived value remembers (weakly) the value it came from and the delta, so
:meth:`WorkspaceFiles.changes_since` answers in O(changes) along a short chain of derivations
instead of diffing two 100k-path sets. The sorted order is kept incrementally when the parent
already has one (a list copy plus binary insertion is ~50× cheaper than re-sorting).
"""

from __future__ import annotations

import bisect
import hashlib
import weakref
from collections.abc import Iterable
from typing import Final

import msgspec

__all__ = ["PersistedWorkspace", "WorkspaceFiles", "digest_of_paths", "path_hash"]

_MASK: Final = (1 << 64) - 1
_MAX_CHAIN: Final = 16
"""How many derivation steps ``changes_since`` follows before falling back to a set diff."""
_INCREMENTAL_SORT_LIMIT: Final = 256
"""Above this many changes a new sorted order is rebuilt lazily instead of patched in place."""


def path_hash(path: str) -> int:
    """The 64-bit hash of one path (blake2b, 8 bytes, little-endian); stable across processes."""
    return int.from_bytes(hashlib.blake2b(path.encode(), digest_size=8).digest(), "little")


def digest_of_paths(paths: Iterable[str]) -> int:
    """The order-independent digest of a set of paths: the sum of their hashes mod 2**64."""
    blake2b = hashlib.blake2b
    from_bytes = int.from_bytes
    total = sum([from_bytes(blake2b(p.encode(), digest_size=8).digest(), "little") for p in paths])
    return total & _MASK


def _format_digest(value: int) -> str:
    return f"{value:016x}"


def _check_path(path: str) -> None:
    """Reject anything that is not a normalized, relative POSIX path encodable as UTF-8."""
    if not isinstance(path, str) or not path:
        raise ValueError(f"workspace path must be a non-empty string, got {path!r}")
    if path[0] == "/" or path[-1] == "/" or "//" in path or "\0" in path:
        raise ValueError(f"workspace path must be a normalized relative POSIX path: {path!r}")
    if "." in path:
        for part in path.split("/"):
            if part in (".", ".."):
                raise ValueError(f"workspace path must not contain '.' or '..': {path!r}")
    if not path.isascii():
        try:
            path.encode()
        except UnicodeEncodeError:
            raise ValueError(f"workspace path is not valid UTF-8: {path!r}") from None


class WorkspaceFiles:
    """An immutable set of file paths (POSIX, relative to ``root``) with an incremental digest.

    Equality is by ``root`` and ``paths``. Use :meth:`with_changes` to derive a new value; the
    result records where it came from so :meth:`changes_since` is O(changes).
    """

    __slots__ = (
        "__weakref__",
        "_added",
        "_digest",
        "_parent",
        "_removed",
        "_root",
        "_set",
        "_sorted",
    )

    _root: str
    _set: frozenset[str] | None
    _sorted: tuple[str, ...] | None
    _digest: int | None
    _parent: weakref.ref[WorkspaceFiles] | None
    _added: frozenset[str]
    _removed: frozenset[str]

    def __init__(self, root: str, paths: Iterable[str]) -> None:
        path_set = frozenset(paths)
        for path in path_set:
            _check_path(path)
        self._init(root, path_set, None, None, None, frozenset(), frozenset())

    def _init(
        self,
        root: str,
        path_set: frozenset[str] | None,
        sorted_paths: tuple[str, ...] | None,
        digest: int | None,
        parent: weakref.ref[WorkspaceFiles] | None,
        added: frozenset[str],
        removed: frozenset[str],
    ) -> None:
        if not isinstance(root, str):
            raise TypeError(f"workspace root must be a string, got {type(root).__name__}")
        self._root = root
        self._set = path_set
        self._sorted = sorted_paths
        self._digest = digest
        self._parent = parent
        self._added = added
        self._removed = removed

    # --- views ------------------------------------------------------------------------------

    @property
    def root(self) -> str:
        return self._root

    @property
    def paths(self) -> frozenset[str]:
        """All file paths (built lazily from the sorted order when only that is known)."""
        if self._set is None:
            assert self._sorted is not None
            self._set = frozenset(self._sorted)
        return self._set

    @property
    def count(self) -> int:
        if self._sorted is not None:
            return len(self._sorted)
        assert self._set is not None
        return len(self._set)

    @property
    def digest_value(self) -> int:
        """The digest as an integer (sum of :func:`path_hash` mod 2**64)."""
        if self._digest is None:
            source = self._set if self._set is not None else self._sorted
            assert source is not None
            self._digest = digest_of_paths(source)
        return self._digest

    @property
    def digest(self) -> str:
        """The digest as 16 hex digits."""
        return _format_digest(self.digest_value)

    def sorted_paths(self) -> tuple[str, ...]:
        """All paths in code-point order (computed once, then cached)."""
        if self._sorted is None:
            assert self._set is not None
            self._sorted = tuple(sorted(self._set))
        return self._sorted

    def __contains__(self, path: object) -> bool:
        if self._set is not None:
            return path in self._set
        if not isinstance(path, str):
            return False
        assert self._sorted is not None
        index = bisect.bisect_left(self._sorted, path)
        return index < len(self._sorted) and self._sorted[index] == path

    def __len__(self) -> int:
        return self.count

    # --- derivation -------------------------------------------------------------------------

    def with_changes(
        self, added: Iterable[str] = (), removed: Iterable[str] = ()
    ) -> WorkspaceFiles:
        """A new value with ``added`` paths inserted and ``removed`` paths dropped.

        Adding a present path or removing an absent one is a no-op; when nothing changes the
        result is ``self``. A path may not be both added and removed. Cost: O(changes) for the
        digest and the recorded delta; the path set or sorted order is copied once, lazily.
        """
        add = frozenset(added)
        remove = frozenset(removed)
        if add & remove:
            both = sorted(add & remove)[:3]
            raise ValueError(f"paths cannot be both added and removed: {both}")
        for path in add:
            _check_path(path)
        add = frozenset(p for p in add if p not in self)
        remove = frozenset(p for p in remove if p in self)
        if not add and not remove:
            return self

        digest: int | None = None
        if self._digest is not None:
            delta = sum(path_hash(p) for p in add) - sum(path_hash(p) for p in remove)
            digest = (self._digest + delta) & _MASK

        new_sorted: tuple[str, ...] | None = None
        new_set: frozenset[str] | None = None
        if self._sorted is not None and len(add) + len(remove) <= _INCREMENTAL_SORT_LIMIT:
            items = list(self._sorted)
            for path in remove:
                del items[bisect.bisect_left(items, path)]
            for path in add:
                bisect.insort(items, path)
            new_sorted = tuple(items)
        else:
            new_set = (self.paths - remove) | add

        result = WorkspaceFiles.__new__(WorkspaceFiles)
        result._init(self._root, new_set, new_sorted, digest, weakref.ref(self), add, remove)
        return result

    def changes_since(self, previous: WorkspaceFiles) -> tuple[frozenset[str], frozenset[str]]:
        """``(added, removed)``: the paths in ``self`` but not ``previous``, and the reverse.

        O(changes) when ``self`` was derived from ``previous`` by a short chain of
        :meth:`with_changes` calls (and ``previous`` is still alive); a full set diff otherwise.
        Roots are not compared.
        """
        if previous is self:
            return frozenset(), frozenset()
        deltas: list[tuple[frozenset[str], frozenset[str]]] = []
        node: WorkspaceFiles = self
        for _ in range(_MAX_CHAIN):
            parent = node._parent() if node._parent is not None else None
            if parent is None:
                break
            deltas.append((node._added, node._removed))
            if parent is previous:
                return _compose(reversed(deltas))
            node = parent
        return self.paths - previous.paths, previous.paths - self.paths

    # --- value semantics --------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, WorkspaceFiles):
            return NotImplemented
        if self._root != other._root or self.count != other.count:
            return False
        if self.digest_value != other.digest_value:
            return False
        if self._sorted is not None and other._sorted is not None:
            return self._sorted == other._sorted
        return self.paths == other.paths

    def __hash__(self) -> int:
        return hash((self._root, self.count, self.digest_value))

    def __repr__(self) -> str:
        return f"WorkspaceFiles(root={self._root!r}, count={self.count}, digest={self.digest!r})"


def _compose(
    deltas: Iterable[tuple[frozenset[str], frozenset[str]]],
) -> tuple[frozenset[str], frozenset[str]]:
    """Fold consecutive (added, removed) deltas, oldest first, into one net delta."""
    net_added: frozenset[str] = frozenset()
    net_removed: frozenset[str] = frozenset()
    for added, removed in deltas:
        net_added, net_removed = (
            (net_added - removed) | (added - net_removed),
            (net_removed - added) | (removed - net_added),
        )
    return net_added, net_removed


class PersistedWorkspace(msgspec.Struct, frozen=True):
    """A workspace file set as restored from a (bounded) rollout entry.

    ``listed`` holds the first paths in sorted order, at most the persisted cap; when
    ``count`` is larger the value is incomplete: only paths ``<= last_listed`` are known exactly,
    and the rest is summarized by ``count`` and ``digest``.
    """

    root: str
    count: int
    digest: str
    listed: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.count < len(self.listed):
            raise ValueError(f"count {self.count} is smaller than the {len(self.listed)} listed")
        if len(self.digest) != 16 or any(c not in "0123456789abcdef" for c in self.digest):
            raise ValueError(f"digest must be 16 lowercase hex digits, got {self.digest!r}")
        if any(a >= b for a, b in zip(self.listed, self.listed[1:], strict=False)):
            raise ValueError("listed paths must be sorted and unique")

    @property
    def complete(self) -> bool:
        """True when every path is listed."""
        return self.count == len(self.listed)

    @property
    def digest_value(self) -> int:
        return int(self.digest, 16)

    @property
    def last_listed(self) -> str | None:
        return self.listed[-1] if self.listed else None
