"""JSON-exact equality (``json_equal``): the comparison ``create_merge_patch`` makes, on
exact built-in types only (see the package
docstring, "Speed"): ``true`` differs from ``1`` and ``1`` from ``1.0``."""

from __future__ import annotations

import math
from typing import Any, TypeAlias

__all__ = ["Json", "JsonObject", "arrays_equal", "floats_equal", "json_equal"]

_MISSING = object()
"""No such member (distinct from JSON null)."""

Json: TypeAlias = bool | int | float | str | list["Json"] | dict[str, "Json"] | None
"""A JSON value as produced by ``json.loads``."""

JsonObject: TypeAlias = dict[str, Json]
"""A JSON object."""


def json_equal(a: Json, b: Json) -> bool:
    """Return whether ``a`` and ``b`` are the same JSON value.

    Unlike ``==``, this tells ``true`` from ``1`` and ``1`` from ``1.0`` (and ``0.0`` from
    ``-0.0``), because they serialize differently. Object member order is ignored, array order
    is not. Identical objects compare equal without being walked.
    """
    return a is b or _equal(a, b)


def _equal(a: Any, b: Any) -> bool:
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return objects_equal(a, b)
    if kind is list:
        return arrays_equal(a, b)
    if kind is float:
        return floats_equal(a, b)
    return bool(a == b)


def floats_equal(a: float, b: float) -> bool:
    # -0.0 == 0.0 in Python, but they are different JSON texts.
    return a == b and (a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b))


def objects_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if len(a) != len(b):
        return False
    get = b.get
    for key, value in a.items():
        other = get(key, _MISSING)
        if value is other:
            continue
        kind = type(value)
        if kind is not type(other):
            return False  # also when the key is missing from b
        if kind is dict:
            if not objects_equal(value, other):
                return False
        elif kind is list:
            if not arrays_equal(value, other):
                return False
        elif kind is float:
            if not floats_equal(value, other):
                return False
        elif value != other:
            return False
    return True


def arrays_equal(a: list[Any], b: list[Any]) -> bool:
    if len(a) != len(b):
        return False
    for value, other in zip(a, b, strict=True):
        if value is other:
            continue
        kind = type(value)
        if kind is not type(other):
            return False
        if kind is dict:
            if not objects_equal(value, other):
                return False
        elif kind is list:
            if not arrays_equal(value, other):
                return False
        elif kind is float:
            if not floats_equal(value, other):
                return False
        elif value != other:
            return False
    return True


# --------------------------------------------------------------------------------------------
# Create
