"""RFC 7396 JSON merge patches: create, apply, and the null-stripping used on snapshots.

What belongs here: pure functions on JSON values (the ``Json`` type below): computing a merge
patch between two values (:func:`create_merge_patch`), applying one (:func:`apply_merge_patch`),
removing null object members (:func:`strip_null_fields`) and a JSON-exact equality
(:func:`json_equal`). Stdlib only, no I/O, no clock. What does not belong here: anything that knows
about world-state sections, rollouts or (de)serialization; those layers call in with plain values.

Values are the plain Python shapes ``json.loads`` produces: ``None``, ``bool``, ``int``,
``float``, ``str``, ``list`` and ``dict`` with ``str`` keys.

Structural sharing. Inputs are never mutated. Results share every subtree that did not change:

* ``apply_merge_patch`` returns new dicts along the paths the patch touches and reuses the very
  same objects of ``target`` everywhere else (an empty object patch returns ``target`` itself).
  Values taken from the patch are copied, so mutating the result never changes the patch.
* ``create_merge_patch`` puts subtrees of ``target`` into the patch without copying them.
* ``strip_null_fields`` returns its argument (or subtree) unchanged where there is nothing to strip.

Treat results as immutable, or deep-copy them before mutating in place.

Null values. RFC 7396 uses ``null`` in a patch to mean "remove this member", so a patch cannot
say "set this member to null", and a top-level patch cannot say "replace the document with
null". ``create_merge_patch`` therefore raises ``ValueError`` when ``target`` holds a null object
member that the patch would have to carry (one that is new or changed relative to ``source``),
or when ``target`` is ``null`` at the top and ``source`` is not. World-state snapshots never hit
this: they are passed through ``strip_null_fields`` first. Nulls inside arrays are always fine,
because arrays are replaced whole.

Speed. ``create_merge_patch`` runs on every model step over snapshots with tens of thousands of
keys, usually rebuilt from scratch (equal but not identical). The internal walkers therefore
dispatch on exact ``type()`` and inline the scalar cases instead of calling ``json_equal`` per
leaf; values must use the exact built-in types (subclasses such as ``OrderedDict`` are not
JSON values here).

Key order (only matters for byte-identical output, see spec §1.5): at the top level a patch lists
removed keys (sorted) and then changed keys (sorted); in nested objects it lists removed keys (in
the source's order) and then changed keys (in the target's order).
"""

from __future__ import annotations

import enum
import itertools
import operator
from typing import Any

from mini_codex.jsonmerge.equality import (
    Json,
    JsonObject,
    arrays_equal,
    floats_equal,
    json_equal,
)

__all__ = [
    "Json",
    "JsonObject",
    "apply_merge_patch",
    "create_merge_patch",
    "json_equal",
    "strip_null_fields",
]

# The private walkers below take ``Any``: they dispatch on ``type(x) is dict`` (exact and faster
# than isinstance), which mypy cannot use for narrowing. The public functions are fully typed.


class _Missing(enum.Enum):
    """Sentinel type for "no such member", distinct from JSON null."""

    MISSING = enum.auto()


_MISSING = _Missing.MISSING


class _NullMemberError(Exception):
    """Internal: the patch would have to carry a null object member.

    ``reversed_path`` collects the keys innermost first while the error unwinds, so the happy
    path pays nothing for path bookkeeping.
    """

    def __init__(self) -> None:
        super().__init__()
        self.reversed_path: list[str] = []


def create_merge_patch(source: Json, target: Json) -> Json | None:
    """Return the RFC 7396 merge patch that turns ``source`` into ``target``, or ``None``.

    ``None`` means "nothing changed" (``source`` and ``target`` are JSON-equal); it is never a
    patch. For every ``source`` and every ``target`` without null object members,
    ``apply_merge_patch(source, create_merge_patch(source, target))`` is JSON-equal to
    ``target``.

    If ``target`` is not an object, the patch is ``target`` itself. If ``source`` is not an
    object, the patch holds all members of ``target``. Objects are diffed recursively;
    subtrees are compared by identity before equality, so diffing a snapshot against a copy
    that shares its unchanged parts costs about one pass over the top-level keys. Key order is
    described in the module docstring.

    Raises:
        ValueError: ``target`` is ``null`` while ``source`` is not (the patch would be JSON
            null, which the ``None`` return value cannot be told apart from), or ``target``
            holds a null object member that differs from ``source`` (a merge patch reads a
            null member as "remove").
    """
    if source is target:
        return None
    if type(target) is not dict:
        if json_equal(source, target):
            return None
        if target is None:
            raise ValueError(
                "cannot create a merge patch that replaces a document with null: the patch "
                "would be JSON null, and create_merge_patch returns None only for 'no change'"
            )
        return target
    try:
        if type(source) is dict:
            removed, changed = _diff_members(source, target)
            if not removed and not changed:
                return None
        else:
            removed, changed = [], [(key, _full_value(key, value)) for key, value in target.items()]
    except _NullMemberError as exc:
        pointer = "".join("/" + _escape_pointer(key) for key in reversed(exc.reversed_path))
        raise ValueError(
            f"cannot create a merge patch: target has a null object member at {pointer!r}; "
            "a merge patch reads null as 'remove this member', so it cannot set a null value "
            "(strip null fields first, see strip_null_fields)"
        ) from None
    # Spec §1.5: removals first, then changes, each sorted at the top level. Sorting only the
    # emitted keys keeps an unchanged-but-large snapshot cheap.
    patch: JsonObject = dict.fromkeys(sorted(removed))
    patch.update(sorted(changed, key=operator.itemgetter(0)))
    return patch


def _escape_pointer(key: str) -> str:
    """Escape ``key`` as a JSON Pointer (RFC 6901) reference token, for error messages."""
    return key.replace("~", "~0").replace("/", "~1")


def _diff_objects(source: dict[str, Any], target: dict[str, Any]) -> JsonObject | None:
    """The nested patch between two objects (removals, then changes), or None if equal."""
    removed, changed = _diff_members(source, target)
    if not removed and not changed:
        return None
    patch: JsonObject = dict.fromkeys(removed)
    patch.update(changed)
    return patch


def _diff_members(
    source: dict[str, Any], target: dict[str, Any]
) -> tuple[list[str], list[tuple[str, Json]]]:
    """Removed keys (in source order) and (key, patch value) changes (in target order)."""
    changed: list[tuple[str, Json]] = []
    found = 0
    get = source.get
    for key, value in target.items():
        previous = get(key, _MISSING)
        if previous is value:
            found += 1
            continue
        if previous is _MISSING:
            changed.append((key, _full_value(key, value)))
            continue
        found += 1
        kind = type(value)
        if kind is type(previous):
            if kind is dict:
                try:
                    patch = _diff_objects(previous, value)
                except _NullMemberError as exc:
                    exc.reversed_path.append(key)
                    raise
                if patch is not None:
                    changed.append((key, patch))
                continue
            if kind is list:
                if arrays_equal(previous, value):
                    continue
            elif kind is float:
                if floats_equal(previous, value):
                    continue
            elif value == previous:
                continue
        # New type or new value: the patch carries the target value whole.
        changed.append((key, _full_value(key, value)))
    if found == len(source):
        # Every source key is still there: no removals, and no need to walk the source.
        return [], changed
    return [key for key in source if key not in target], changed


def _full_value(key: str, value: Any) -> Json:
    """``value`` as the whole patch value of member ``key``: checked, shared, not copied."""
    try:
        if value is None:
            raise _NullMemberError
        if type(value) is dict:
            _require_null_free(value)
    except _NullMemberError as exc:
        exc.reversed_path.append(key)
        raise
    return value  # type: ignore[no-any-return]


def _require_null_free(value: dict[str, Any]) -> None:
    """Raise ``_NullMemberError`` if an object member (outside arrays) is null."""
    for key, member in value.items():
        try:
            if member is None:
                raise _NullMemberError
            if type(member) is dict:
                _require_null_free(member)
        except _NullMemberError as exc:
            exc.reversed_path.append(key)
            raise


# --------------------------------------------------------------------------------------------
# Apply


def apply_merge_patch(target: Json, patch: Json) -> Json:
    """Apply the RFC 7396 merge ``patch`` to ``target`` and return the result.

    A non-object patch replaces the target wholesale. An object patch is merged member by
    member (onto ``{}`` if the target is not an object): ``null`` removes a member, objects
    merge recursively, anything else (arrays included) replaces the member. Null members of
    objects that the patch creates are dropped; nulls inside arrays are kept.

    Neither argument is mutated. Untouched subtrees of ``target`` are shared with the result;
    everything taken from ``patch`` is copied.
    """
    if not isinstance(patch, dict):
        return _deep_copy(patch)
    if not isinstance(target, dict):
        return _fresh_object(patch)
    return _merge_object(target, patch)


def _merge_object(target: JsonObject, patch: JsonObject) -> JsonObject:
    if not patch:
        return target
    result = dict(target)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            existing = result.get(key)
            if isinstance(existing, dict):
                result[key] = _merge_object(existing, value)
            else:
                result[key] = _fresh_object(value)
        else:
            result[key] = _deep_copy(value)
    return result


def _fresh_object(patch: JsonObject) -> JsonObject:
    """The patch merged onto ``{}``: a copy with null members dropped (not inside arrays)."""
    return {
        key: _fresh_object(value) if isinstance(value, dict) else _deep_copy(value)
        for key, value in patch.items()
        if value is not None
    }


def _deep_copy(value: Json) -> Json:
    if isinstance(value, list):
        return [_deep_copy(item) for item in value]
    if isinstance(value, dict):
        return {key: _deep_copy(item) for key, item in value.items()}
    return value


# --------------------------------------------------------------------------------------------
# Null stripping


def strip_null_fields(value: Json) -> Json:
    """Recursively remove object members whose value is null (spec §1.2 step 3).

    Does not descend into arrays: nulls in arrays, and null members of objects inside arrays,
    are kept, because merge patches replace arrays whole. A top-level ``None`` is returned as
    is (dropping a null snapshot is the caller's decision). Subtrees with nothing to strip are
    returned unchanged, not copied.
    """
    if type(value) is not dict:
        return value
    return _strip_object(value)


def _strip_object(value: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] | None = None
    for index, (key, member) in enumerate(value.items()):
        if type(member) is dict:
            stripped = _strip_object(member)
            if result is None:
                if stripped is member:
                    continue
                result = _first_members(value, index)
            result[key] = stripped
        elif member is None:
            if result is None:
                result = _first_members(value, index)
        elif result is not None:
            result[key] = member
    return value if result is None else result


def _first_members(value: dict[str, Any], count: int) -> dict[str, Any]:
    """A new dict with the first ``count`` members of ``value`` (kept unchanged so far)."""
    return dict(itertools.islice(value.items(), count))
