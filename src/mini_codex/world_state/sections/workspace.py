"""The ``workspace`` section: the files under the primary cwd (ours, DESIGN §4 and §9 P1/P4).

The typed snapshot is the live :class:`WorkspaceFiles` (the full set), so a step's diff against the
previous step is exact. The persisted entry is bounded (P4)::

    {"root": str, "count": int, "digest": str, "files": {"<path>": 1, ...}}

with only the first ``persist_cap`` paths in sorted order. ``files`` is an object keyed by path,
not an array, because RFC 7396 replaces arrays whole: with an object, one added file is a
one-member patch. Decoding an entry gives a :class:`PersistedWorkspace`, incomplete when
``count`` exceeds the number of listed paths. Encodings are cached per ``WorkspaceFiles`` object,
so an unchanged workspace yields the very same dict and every later comparison is O(1) (P1).

Rendering (role user, markers ``<workspace_files>`` … ``</workspace_files>``):

* ``Absent`` → the full listing: root, file count, up to ``render_cap`` sorted paths and
  "... and N more files";
* ``Unknown``, or a ``Known`` previous with another root → the same, first line
  "This listing replaces any previous workspace file listing.";
* ``Known`` complete → "Added files:" / "Removed files:" lists (each capped at ``render_cap``
  with "... and N more"), nothing when equal;
* ``Known`` incomplete (restored from a capped rollout entry) → the exact diff of the listed range
  (paths ``<=`` the last listed one) and, when count or digest show other changes beyond it,
  "Other changes outside the listed range: now N files.".

Paths that are not printable (a newline in a file name, say) are shown JSON-quoted.
Legacy and retained matchers: role user plus the markers. What does not belong here: scanning
the file system (``mini_codex.discovery.workspace``).
"""

from __future__ import annotations

import bisect
import json
import weakref
from collections.abc import Collection, Iterable
from typing import ClassVar, Final, TypeAlias, assert_never

from mini_codex.jsonmerge import Json, JsonObject
from mini_codex.world_state.fragment import Fragment, markers_match
from mini_codex.world_state.section import Absent, Known, Previous, Section, SnapshotDecodeError
from mini_codex.world_state.section import Unknown as UnknownState
from mini_codex.world_state.workspace_files import PersistedWorkspace, WorkspaceFiles, path_hash

__all__ = [
    "DEFAULT_PERSIST_CAP",
    "DEFAULT_RENDER_CAP",
    "WORKSPACE_END",
    "WORKSPACE_START",
    "WorkspaceSection",
    "WorkspaceSnapshot",
]

WORKSPACE_START: Final = "<workspace_files>"
WORKSPACE_END: Final = "</workspace_files>"
DEFAULT_PERSIST_CAP: Final = 2000
DEFAULT_RENDER_CAP: Final = 100

REPLACES_LINE: Final = "This listing replaces any previous workspace file listing."

WorkspaceSnapshot: TypeAlias = WorkspaceFiles | PersistedWorkspace
"""The live value, or one restored from a rollout entry."""

_MASK: Final = (1 << 64) - 1

_ENCODED: weakref.WeakKeyDictionary[WorkspaceFiles, dict[int, JsonObject]] = (
    weakref.WeakKeyDictionary()
)
"""Encoded entries per live value and persist cap (the O(1) unchanged path)."""


class WorkspaceSection(Section[WorkspaceSnapshot]):
    """The workspace file set (see the module docstring)."""

    ID: ClassVar[str] = "workspace"
    snapshot_type: ClassVar[object] = WorkspaceSnapshot

    def __init__(
        self,
        files: WorkspaceFiles,
        *,
        persist_cap: int = DEFAULT_PERSIST_CAP,
        render_cap: int = DEFAULT_RENDER_CAP,
    ) -> None:
        if persist_cap < 0 or render_cap < 0:
            raise ValueError("persist_cap and render_cap must be >= 0")
        self.files = files
        self.persist_cap = persist_cap
        self.render_cap = render_cap

    def snapshot(self) -> WorkspaceFiles:
        return self.files

    # --- persisted form ---------------------------------------------------------------------

    def encode_snapshot(self, snapshot: WorkspaceSnapshot) -> Json:
        """The bounded entry; the same dict object for the same live value (do not mutate)."""
        if isinstance(snapshot, PersistedWorkspace):
            listed = snapshot.listed[: self.persist_cap]
            return _entry(snapshot.root, snapshot.count, snapshot.digest, listed)
        cache = _ENCODED.get(snapshot)
        if cache is None:
            cache = {}
            _ENCODED[snapshot] = cache
        encoded = cache.get(self.persist_cap)
        if encoded is None:
            listed = snapshot.sorted_paths()[: self.persist_cap]
            encoded = _entry(snapshot.root, snapshot.count, snapshot.digest, listed)
            cache[self.persist_cap] = encoded
        return encoded

    @classmethod
    def decode_snapshot(cls, raw: Json) -> PersistedWorkspace:
        if not isinstance(raw, dict):
            raise SnapshotDecodeError(f"workspace: expected an object, got {type(raw).__name__}")
        root, count, digest, files = (raw.get(k) for k in ("root", "count", "digest", "files"))
        if not isinstance(root, str):
            raise SnapshotDecodeError("workspace: 'root' must be a string")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise SnapshotDecodeError("workspace: 'count' must be a non-negative integer")
        if not isinstance(digest, str):
            raise SnapshotDecodeError("workspace: 'digest' must be a string")
        if not isinstance(files, dict):
            raise SnapshotDecodeError("workspace: 'files' must be an object keyed by path")
        try:
            return PersistedWorkspace(root, count, digest, tuple(sorted(files)))
        except ValueError as exc:
            raise SnapshotDecodeError(f"workspace: {exc}") from exc

    # --- rendering --------------------------------------------------------------------------

    def render_diff(self, previous: Previous[WorkspaceSnapshot]) -> Fragment | None:
        files = self.files
        match previous:
            case Absent():
                return self._fragment(self._listing(replaces=False))
            case UnknownState():
                return self._fragment(self._listing(replaces=True))
            case Known(snapshot=before):
                if before is files:
                    return None
                if before.root != files.root:
                    return self._fragment(self._listing(replaces=True))
                if isinstance(before, WorkspaceFiles):
                    added, removed = files.changes_since(before)
                    return self._changes(added, removed, None)
                return self._changes_from_persisted(before)
            case _:
                assert_never(previous)

    def _listing(self, *, replaces: bool) -> list[str]:
        files = self.files
        lines = [REPLACES_LINE] if replaces else []
        lines.append(f"Workspace root: {files.root}")
        lines.append(f"Files: {files.count}")
        shown = files.sorted_paths()[: self.render_cap]
        lines.extend(_show(path) for path in shown)
        hidden = files.count - len(shown)
        if hidden:
            lines.append(f"... and {hidden} more {'file' if hidden == 1 else 'files'}")
        return lines

    def _changes(
        self, added: Collection[str], removed: Collection[str], other_count: int | None
    ) -> Fragment | None:
        lines: list[str] = []
        for label, paths in (("Added files:", added), ("Removed files:", removed)):
            if not paths:
                continue
            lines.append(label)
            shown = sorted(paths)[: self.render_cap]
            lines.extend(_show(path) for path in shown)
            if len(paths) > len(shown):
                lines.append(f"... and {len(paths) - len(shown)} more")
        if other_count is not None:
            lines.append(f"Other changes outside the listed range: now {other_count} files.")
        return self._fragment(lines) if lines else None

    def _changes_from_persisted(self, before: PersistedWorkspace) -> Fragment | None:
        files = self.files
        if before.complete:
            listed = frozenset(before.listed)
            return self._changes(files.paths - listed, listed - files.paths, None)
        current = files.sorted_paths()
        last = before.last_listed
        end = 0 if last is None else bisect.bisect_right(current, last)
        in_range = frozenset(current[:end])
        listed = frozenset(before.listed)
        # What lies beyond the listed range, summarized as (count, digest) on both sides.
        before_rest = (before.count - len(listed), (before.digest_value - _sum(listed)) & _MASK)
        current_rest = (files.count - end, (files.digest_value - _sum(in_range)) & _MASK)
        other = files.count if before_rest != current_rest else None
        return self._changes(in_range - listed, listed - in_range, other)

    @staticmethod
    def _fragment(lines: list[str]) -> Fragment:
        return Fragment(
            role="user",
            start_marker=WORKSPACE_START,
            end_marker=WORKSPACE_END,
            body="\n" + "\n".join(lines) + "\n",
        )

    # --- matchers ---------------------------------------------------------------------------

    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        return role == "user" and markers_match(WORKSPACE_START, WORKSPACE_END, text)

    @classmethod
    def has_retained_fragment_matcher(cls) -> bool:
        return True

    @classmethod
    def matches_retained_fragment(cls, role: str, text: str) -> bool:
        return cls.matches_legacy_fragment(role, text)


def _entry(root: str, count: int, digest: str, listed: Iterable[str]) -> JsonObject:
    files: JsonObject = dict.fromkeys(listed, 1)
    return {"root": root, "count": count, "digest": digest, "files": files}


def _sum(paths: Iterable[str]) -> int:
    return sum(path_hash(path) for path in paths)


def _show(path: str) -> str:
    return path if path.isprintable() else json.dumps(path)
