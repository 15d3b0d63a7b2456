"""``WorldState``: the ordered container of one step's sections (spec §1.2–§1.4).

What belongs here: adding sections (duplicate IDs, the ``host_skills`` placement rule), turning
sections into a persisted :class:`WorldStateSnapshot` (§1.2: persistence flag, encoding, null
stripping), and the three rendering modes that choose each section's previous state:

* :meth:`WorldState.render_full` – every section gets ``ABSENT``;
* :meth:`WorldState.render_diff` – ``Known`` from a previous snapshot (or previous live world
  state), otherwise ``ABSENT``; used between the steps of a turn;
* :meth:`WorldState.render_history_diff` – the history-aware diff used at turn start: retained
  fragment matchers can demote ``Known`` to ``ABSENT``, legacy matchers promote ``ABSENT`` to
  ``UNKNOWN``.

What does not: the sections themselves (``sections/``), turning fragments into messages
(``messages.py``), and the baseline bookkeeping (``mini_codex.context.history``).

Lifecycle. A ``WorldState`` is built once per step, by ``add``-ing every section, and is then
only read. Each section's snapshot is computed and encoded at most once per ``WorldState`` (on
first use by ``snapshot()`` or a render call) and cached, so ``snapshot()`` and ``render_diff``
never encode twice. Adding a section later is allowed but discards the cached
``WorldStateSnapshot``; sections themselves must not change once added.
"""

from __future__ import annotations

import enum
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeAlias

from mini_codex.errors import WorldStateError
from mini_codex.jsonmerge import Json, JsonObject, json_equal, strip_null_fields
from mini_codex.protocol.items import InputText, Message, ResponseItem
from mini_codex.world_state.extensions import ExtensionSection, FragmentMatcher
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import ABSENT, UNKNOWN, Known, Previous, Section
from mini_codex.world_state.snapshot import WorldStateSnapshot

__all__ = ["AnySection", "InputTexts", "WorldState", "input_texts"]

logger = logging.getLogger(__name__)

AnySection: TypeAlias = Section[Any] | ExtensionSection
"""Anything a ``WorldState`` holds: a built-in section or an extension contribution."""

HOST_SKILLS_ID = "host_skills"
PERMISSIONS_ID = "permissions"


class _Unset(enum.Enum):
    UNSET = enum.auto()


_UNSET = _Unset.UNSET


class _Slot:
    """One section plus its lazily computed, cached typed snapshot and persisted entry."""

    __slots__ = ("_entry", "_typed", "section", "section_id")

    def __init__(self, section: AnySection) -> None:
        self.section = section
        self.section_id = section.id if isinstance(section, ExtensionSection) else section.ID
        self._typed: Any = _UNSET
        self._entry: Json | _Unset = _UNSET

    def typed(self) -> Any:
        """The section's current comparison snapshot (raw JSON for extensions)."""
        if self._typed is _UNSET:
            section = self.section
            if isinstance(section, ExtensionSection):
                self._typed = strip_null_fields(section.snapshot)
            else:
                self._typed = section.snapshot()
        return self._typed

    def entry(self) -> Json:
        """The persisted entry per spec §1.2, or ``None`` when the section adds no entry."""
        if self._entry is _UNSET:
            self._entry = self._encode()
        return self._entry

    def _encode(self) -> Json:
        section = self.section
        if isinstance(section, ExtensionSection):
            # Extensions: no persistence flag, no typed encoding; a null snapshot is no entry.
            stripped: Json = self.typed()
            return stripped
        if not section.should_persist():
            return None
        try:
            encoded = section.encode_snapshot(self.typed())
        except Exception:
            logger.exception(
                "failed to serialize world-state section snapshot (section %s)", self.section_id
            )
            return None
        stripped = _strip_cached(encoded)
        if stripped is None:
            logger.error(
                "world-state section snapshot cannot be null (section %s)", self.section_id
            )
        return stripped

    def restore(self, raw: Json) -> Previous[Any]:
        """``Known`` of a persisted entry, or ``UNKNOWN`` (with a warning) if it does not decode."""
        section = self.section
        if isinstance(section, ExtensionSection):
            return Known(raw)
        try:
            return Known(section.decode_snapshot(raw))
        except (ValueError, TypeError) as exc:
            logger.warning(
                "failed to restore world-state section snapshot (section %s): %s",
                self.section_id,
                exc,
            )
            return UNKNOWN

    def render(self, previous: Previous[Any]) -> Fragment | None:
        section = self.section
        if isinstance(section, ExtensionSection):
            return section.render(previous)
        return section.render_diff(previous)

    def unchanged_since(self, before: _Slot) -> bool:
        """Whether ``before`` (same section type) had the same current snapshot as this slot."""
        before_typed = before.typed()
        current_typed = self.typed()
        if before_typed is current_typed:
            return True
        if isinstance(self.section, ExtensionSection):
            return json_equal(before_typed, current_typed)
        return bool(before_typed == current_typed)

    def legacy_matcher(self) -> FragmentMatcher | None:
        section = self.section
        if isinstance(section, ExtensionSection):
            return section.legacy_matcher
        return section.matches_current_legacy_fragment

    def retained_matcher(self) -> FragmentMatcher | None:
        section = self.section
        if isinstance(section, ExtensionSection):
            return section.retained_matcher
        if section.has_retained_fragment_matcher():
            return section.matches_retained_fragment
        return None


class InputTexts:
    """What :meth:`WorldState.render_history_diff` reads of retained history, given without
    the items: ``read()`` gives the (role, text) of every ``input_text`` content item of its
    messages, in order (called at most once, and only when a section asks). For a caller that
    can list them without building the messages (a resumed history, ``context.lazy``)."""

    __slots__ = ("read",)

    def __init__(self, read: Callable[[], list[tuple[str, str]]]) -> None:
        self.read = read


def input_texts(items: Iterable[ResponseItem]) -> list[tuple[str, str]]:
    """The (role, text) of every ``input_text`` content item of the messages of ``items``."""
    return [
        (item.role, part.text)
        for item in items
        if isinstance(item, Message)
        for part in item.content
        if isinstance(part, InputText)
    ]


class _RetainedTexts:
    """The (role, text) of every ``input_text`` content item of the retained messages.

    Collected lazily, once per render, because most sections never ask.
    """

    def __init__(self, history: Sequence[ResponseItem] | InputTexts) -> None:
        self._history = history
        self._texts: list[tuple[str, str]] | None = None

    def satisfies(self, matcher: FragmentMatcher) -> bool:
        """Whether some retained message has an ``input_text`` item the matcher accepts."""
        if self._texts is None:
            history = self._history
            if isinstance(history, InputTexts):
                self._texts = history.read()
            else:
                self._texts = input_texts(history)
        return any(matcher(role, text) for role, text in self._texts)


class WorldState:
    """An insertion-ordered map from section ID to section; rendering follows that order."""

    def __init__(self, sections: Iterable[AnySection] = ()) -> None:
        self._slots: list[_Slot] = []
        self._by_id: dict[str, _Slot] = {}
        self._snapshot: WorldStateSnapshot | None = None
        for section in sections:
            self.add(section)

    # --- building ---------------------------------------------------------------------------

    def add(self, section: AnySection) -> None:
        """Add a section at the end, except ``host_skills`` (see below).

        An extension section with ID ``host_skills`` goes just before ``permissions`` when that
        is already present (spec §1.4). Raises ``WorldStateError`` on a duplicate ID.
        """
        slot = _Slot(section)
        if slot.section_id in self._by_id:
            raise WorldStateError(f"duplicate world-state section ID: {slot.section_id}")
        if (
            isinstance(section, ExtensionSection)
            and slot.section_id == HOST_SKILLS_ID
            and PERMISSIONS_ID in self._by_id
        ):
            self._slots.insert(self._slots.index(self._by_id[PERMISSIONS_ID]), slot)
        else:
            self._slots.append(slot)
        self._by_id[slot.section_id] = slot
        self._snapshot = None

    # --- reading ----------------------------------------------------------------------------

    @property
    def ids(self) -> tuple[str, ...]:
        """Section IDs in rendering order."""
        return tuple(slot.section_id for slot in self._slots)

    def get(self, section_id: str) -> AnySection | None:
        slot = self._by_id.get(section_id)
        return None if slot is None else slot.section

    def __iter__(self) -> Iterator[AnySection]:
        return (slot.section for slot in self._slots)

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, section_id: object) -> bool:
        return section_id in self._by_id

    def __repr__(self) -> str:
        return f"WorldState({list(self.ids)!r})"

    # --- persistence ------------------------------------------------------------------------

    def snapshot(self) -> WorldStateSnapshot:
        """The persisted entries of all sections (spec §1.2), computed once and cached."""
        if self._snapshot is None:
            entries: JsonObject = {}
            for slot in self._slots:
                entry = slot.entry()
                if entry is not None:
                    entries[slot.section_id] = entry
            self._snapshot = WorldStateSnapshot(entries)
        return self._snapshot

    # --- rendering --------------------------------------------------------------------------

    def render_full(self) -> list[Fragment]:
        """Every section rendered from ``ABSENT``: the full initial context."""
        return self._collect(lambda slot: slot.render(ABSENT))

    def render_diff(self, previous: WorldStateSnapshot | WorldState) -> list[Fragment]:
        """Fragments describing the change from ``previous``; never history-aware.

        Each section gets ``Known`` if ``previous`` has an entry for its ID, else ``ABSENT``
        (``UNKNOWN`` only when a persisted entry fails to decode). With a live previous
        ``WorldState``, a section persisted in both gets ``Known`` of the previous section's
        typed snapshot, without a JSON round trip: exact even where the persisted form is
        lossy. Sections whose snapshot is unchanged are skipped without rendering: compared as
        typed snapshots (``==``; JSON-exact for extensions) against a live world state, as
        persisted JSON entries against a snapshot. (So, against a snapshot, a change that a
        lossy persisted form does not show is not rendered either.)
        """
        if isinstance(previous, WorldState):
            return self._collect(lambda slot: self._render_from_live(slot, previous))
        return self._collect(
            lambda slot: self._render_from_entry(slot, previous.get(slot.section_id, _UNSET))
        )

    def render_history_diff(
        self, previous: WorldStateSnapshot | None, history: Sequence[ResponseItem] | InputTexts
    ) -> list[Fragment]:
        """The turn-start diff against a baseline, reconciled with retained ``history``.

        Per section (spec §1.4): with a baseline entry, ``ABSENT`` if the section has a
        retained-fragment matcher that no retained message satisfies, else ``Known``; without
        one, ``UNKNOWN`` if a retained message satisfies its legacy matcher, else ``ABSENT``.
        A message satisfies a matcher when one of its ``input_text`` items does (output text
        and non-message items never do); ``history`` may give just those (:class:`InputTexts`).
        """
        retained = _RetainedTexts(history)

        def render(slot: _Slot) -> Fragment | None:
            raw = _UNSET if previous is None else previous.get(slot.section_id, _UNSET)
            if raw is not _UNSET:
                matcher = slot.retained_matcher()
                if matcher is not None and not retained.satisfies(matcher):
                    return slot.render(ABSENT)
                return self._render_from_entry(slot, raw)
            legacy = slot.legacy_matcher()
            if legacy is not None and retained.satisfies(legacy):
                return slot.render(UNKNOWN)
            return slot.render(ABSENT)

        return self._collect(render)

    def _collect(self, render: Callable[[_Slot], Fragment | None]) -> list[Fragment]:
        fragments: list[Fragment] = []
        for slot in self._slots:
            fragment = render(slot)
            if fragment is not None:
                fragments.append(fragment)
        return fragments

    @staticmethod
    def _render_from_entry(slot: _Slot, raw: Json | _Unset) -> Fragment | None:
        if raw is _UNSET:
            return slot.render(ABSENT)
        current = slot.entry()
        if current is not None and json_equal(current, raw):
            return None  # contract: Known(current) renders nothing
        return slot.render(slot.restore(raw))

    @staticmethod
    def _render_from_live(slot: _Slot, previous: WorldState) -> Fragment | None:
        before = previous._by_id.get(slot.section_id)
        if before is None or before.entry() is None:
            return slot.render(ABSENT)
        if type(before.section) is not type(slot.section):
            # Same ID, different implementation: only the persisted form is comparable.
            return WorldState._render_from_entry(slot, before.entry())
        if slot.unchanged_since(before):
            return None  # contract: Known(current) renders nothing
        return slot.render(Known(before.typed()))


_STRIP_CACHE: OrderedDict[int, tuple[Json, Json]] = OrderedDict()
_STRIP_CACHE_SIZE = 64


def _strip_cached(encoded: Json) -> Json:
    """``strip_null_fields`` memoized by object identity.

    Sections that cache their encoding (``workspace`` returns the same dict while the file set is
    unchanged) then cost O(1) per step here too. The cache holds the encoded object itself, so an
    id is never reused while its entry lives.
    """
    if not isinstance(encoded, dict):
        return strip_null_fields(encoded)
    key = id(encoded)
    hit = _STRIP_CACHE.get(key)
    if hit is not None and hit[0] is encoded:
        _STRIP_CACHE.move_to_end(key)
        return hit[1]
    stripped = strip_null_fields(encoded)
    _STRIP_CACHE[key] = (encoded, stripped)
    if len(_STRIP_CACHE) > _STRIP_CACHE_SIZE:
        _STRIP_CACHE.popitem(last=False)
    return stripped
