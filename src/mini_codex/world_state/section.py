"""The section contract of the WorldState (spec/codex-worldstate.md §1.1).

A section is one typed slice of what the model can see. It owns a stable string ``ID`` (persisted in
rollouts: never rename), builds a typed snapshot of its current value, and renders zero or one
fragment describing the change from a previous state, which is one of:

* ``ABSENT``  – nothing is known to have been shown; render fresh, no notice;
* ``UNKNOWN`` – something may be visible but its value is unavailable; render a conservative
  "replaces previous ..." notice, or nothing if repeating is harmless;
* ``Known(snapshot)`` – the exact previous typed snapshot; render only the changes.

This module holds the contract only; containers live in ``state.py``, fragments in ``fragment.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Generic, TypeAlias, TypeVar

from pydantic import TypeAdapter, ValidationError

from mini_codex.jsonmerge import Json
from mini_codex.world_state.fragment import Fragment

S = TypeVar("S")


class Absent:
    """Nothing is known to have been shown to the model for this section."""

    _instance: ClassVar[Absent | None] = None

    def __new__(cls) -> Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"


class Unknown:
    """The model may have seen something for this section, but its typed value is unavailable."""

    _instance: ClassVar[Unknown | None] = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


ABSENT: Final = Absent()
UNKNOWN: Final = Unknown()


@dataclass(frozen=True, slots=True)
class Known(Generic[S]):
    """The exact previous typed snapshot."""

    snapshot: S


Previous: TypeAlias = Absent | Unknown | Known[S]


class SnapshotDecodeError(ValueError):
    """A persisted snapshot entry does not decode into the section's snapshot type."""


class Section(ABC, Generic[S]):
    """Base class of WorldState sections.

    Subclasses set ``ID`` and ``snapshot_type`` (any type pydantic can validate and serialize:
    str, a dataclass, a pydantic model, a dict type, ...), and implement ``snapshot`` and
    ``render_diff``. The matchers default to "never matches".
    """

    ID: ClassVar[str]
    snapshot_type: ClassVar[Any]

    @abstractmethod
    def snapshot(self) -> S:
        """The current comparison snapshot (only the data needed to decide what to tell next)."""

    @abstractmethod
    def render_diff(self, previous: Previous[S]) -> Fragment | None:
        """Zero or one fragment describing the change from ``previous`` to the current value."""

    def should_persist(self) -> bool:
        """When false the section adds no entry to the persisted snapshot (next time: Absent)."""
        return True

    # --- (de)serialization ------------------------------------------------------------------

    @classmethod
    def _adapter(cls) -> TypeAdapter[Any]:
        adapter = cls.__dict__.get("_snapshot_adapter")
        if adapter is None:
            adapter = TypeAdapter(cls.snapshot_type)
            cls._snapshot_adapter = adapter  # type: ignore[attr-defined]
        return adapter

    def encode_snapshot(self, snapshot: S) -> Json:
        """Serialize a snapshot to JSON (nulls are stripped by the container, not here)."""
        value: Json = self._adapter().dump_python(snapshot, mode="json", exclude_none=False)
        return value

    @classmethod
    def decode_snapshot(cls, raw: Json) -> S:
        """Deserialize a persisted entry; missing optional fields take their defaults.

        Raises ``SnapshotDecodeError`` on a missing required field or a type mismatch.
        """
        try:
            value: S = cls._adapter().validate_python(raw)
        except ValidationError as exc:
            raise SnapshotDecodeError(f"{cls.ID}: {exc.error_count()} validation error(s)") from exc
        return value

    # --- matchers ---------------------------------------------------------------------------

    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        """Recognise model-visible text this section (or its predecessor) emitted earlier."""
        return False

    def matches_current_legacy_fragment(self, role: str, text: str) -> bool:
        """Like ``matches_legacy_fragment`` but may depend on the current value."""
        return self.matches_legacy_fragment(role, text)

    @classmethod
    def has_retained_fragment_matcher(cls) -> bool:
        """If true, a persisted snapshot is trusted only while history retains a fragment."""
        return False

    @classmethod
    def matches_retained_fragment(cls, role: str, text: str) -> bool:
        return False
