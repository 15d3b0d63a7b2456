"""``WorldStateSnapshot``: the persisted form of a world state (spec/codex-worldstate.md §1.5).

What belongs here: the immutable map from section ID to JSON value that rollouts store (a full
``world_state`` line holds one; a patch line holds the RFC 7396 merge patch between two), its
JSON form, and the two patch operations. What does not: encoding sections into entries (that is
``state.py``), and the merge-patch algorithm itself (``mini_codex.jsonmerge``).

Cheapness. Entries are plain JSON values that are never mutated (treat them as frozen). Diffing
and applying share every untouched subtree, so an unchanged entry is recognised by identity and
costs one pointer comparison, and applying a patch copies only the sections it touches.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mini_codex.errors import ProtocolError, WorldStateError
from mini_codex.jsonmerge import Json, JsonObject, apply_merge_patch, create_merge_patch, json_equal

__all__ = ["WorldStateSnapshot"]


class WorldStateSnapshot(Mapping[str, Json]):
    """An immutable map from section ID to that section's JSON snapshot value.

    Keys are kept sorted, so iteration, ``keys()`` and ``to_json()`` list them in sorted order
    (upstream serializes a ``BTreeMap``). Equality is JSON-exact (``true`` differs from ``1``) and
    ignores key order; snapshots are unhashable like the dicts they wrap.

    Values are shared, not copied: do not mutate a value obtained from a snapshot.
    """

    __slots__ = ("_entries",)

    _entries: JsonObject

    def __init__(self, entries: Mapping[str, Json] | None = None) -> None:
        self._entries = dict(sorted(entries.items())) if entries else {}

    @classmethod
    def _wrap(cls, entries: JsonObject) -> WorldStateSnapshot:
        """Adopt ``entries`` (sorting it if needed) without copying the values."""
        snapshot = cls.__new__(cls)
        keys = list(entries)
        snapshot._entries = entries if keys == sorted(keys) else dict(sorted(entries.items()))
        return snapshot

    # --- JSON form --------------------------------------------------------------------------

    def to_json(self) -> JsonObject:
        """The JSON object form, top-level keys sorted (a new dict; the values are shared)."""
        return dict(self._entries)

    @classmethod
    def from_json(cls, obj: Any) -> WorldStateSnapshot:
        """Build a snapshot from the ``state`` of a full ``world_state`` line.

        Raises ``ProtocolError`` if ``obj`` is not a JSON object with string keys. Values are
        taken as they are (not copied, not validated further).
        """
        if not isinstance(obj, dict):
            raise ProtocolError(
                f"a world-state snapshot must be a JSON object, got {type(obj).__name__}"
            )
        for key in obj:
            if not isinstance(key, str):
                raise ProtocolError(f"world-state section IDs must be strings, got {key!r}")
        return cls._wrap(dict(obj))

    # --- patches ----------------------------------------------------------------------------

    def merge_patch_from(self, previous: WorldStateSnapshot) -> JsonObject | None:
        """The RFC 7396 patch turning ``previous`` into this snapshot, or ``None`` if equal.

        Key order (spec §1.5): removed sections first (``id: null``, sorted), then new or
        changed sections (sorted); inside a section, removed keys then changed keys.

        Raises ``WorldStateError`` if this snapshot holds a null object member that the patch
        would have to carry (merge patches cannot express one). Snapshots built by
        ``WorldState.snapshot()`` never do: their null fields are stripped.
        """
        try:
            patch = create_merge_patch(previous._entries, self._entries)
        except ValueError as exc:
            raise WorldStateError(f"cannot diff world-state snapshots: {exc}") from exc
        assert patch is None or isinstance(patch, dict)  # both sides are objects
        return patch

    def apply(self, patch: Mapping[str, Json]) -> WorldStateSnapshot:
        """Apply an RFC 7396 merge patch and return the new snapshot (this one is unchanged).

        A ``null`` removes a section; other values merge into it (a new section starts from
        nothing). Sections the patch does not name are shared with this snapshot.

        Raises ``ProtocolError`` if ``patch`` is not a JSON object (since upstream #38274 the
        persisted ``state`` is always an object).
        """
        if not isinstance(patch, dict):
            raise ProtocolError(
                f"a world-state patch must be a JSON object, got {type(patch).__name__}"
            )
        result = apply_merge_patch(self._entries, patch)
        if result is self._entries:
            return self
        assert isinstance(result, dict)  # an object patch always yields an object
        return WorldStateSnapshot._wrap(result)

    # --- mapping ----------------------------------------------------------------------------

    def __getitem__(self, section_id: str) -> Json:
        return self._entries[section_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, section_id: object) -> bool:
        return section_id in self._entries

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, WorldStateSnapshot):
            return json_equal(self._entries, other._entries)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"WorldStateSnapshot({self._entries!r})"
