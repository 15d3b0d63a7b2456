"""Extension-contributed world-state sections (spec/codex-worldstate.md §1.3).

What belongs here: the :class:`ExtensionSection` contribution (an ID, a precomputed JSON
snapshot and a renderer over raw JSON), the :class:`WorldStateExtension` protocol third parties
implement, and :func:`load_extensions`, which turns entry points of the
``mini_codex.world_state`` group into extension objects. What does not: discovering the entry
points (the caller passes ``importlib.metadata.entry_points(group=EXTENSION_ENTRY_POINT_GROUP)``,
so this module does no environment lookups), and putting sections into a ``WorldState``
(``state.py``).

An extension is asked for its sections once per sampling step::

    class Skills:
        def contribute(self, ctx: ExtensionContext) -> Sequence[ExtensionSection]:
            return [ExtensionSection(id="host_skills", snapshot={...}, render=render_skills)]

The context carries Codex's contributor inputs (``WorldStateContributionInput``): the thread and
turn ids, the step's environments, its ready capability roots, and three stores an extension
keeps its own data in: ``session_store`` and ``thread_store`` live as long as the session (one
session holds one thread in mini-codex; neither is persisted, so a resumed session starts them
empty), ``turn_store`` lives for one turn (every step of the turn sees the same store; the next
turn gets a new one). See ``docs/extensions.md``.

and registered in the extension package's metadata::

    [project.entry-points."mini_codex.world_state"]
    skills = "my_package.skills:Skills"

The entry point may name an extension object, or a class / zero-argument factory returning one.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from mini_codex.errors import WorldStateError
from mini_codex.jsonmerge import Json
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import Previous

__all__ = [
    "EXTENSION_ENTRY_POINT_GROUP",
    "CapabilityRoot",
    "ExtensionContext",
    "ExtensionEnvironment",
    "ExtensionSection",
    "ExtensionStore",
    "ExtensionStores",
    "FragmentMatcher",
    "WorldStateExtension",
    "contribute_sections",
    "load_extensions",
]

EXTENSION_ENTRY_POINT_GROUP = "mini_codex.world_state"
"""The entry point group extension packages register their providers under."""

FragmentMatcher = Callable[[str, str], bool]
"""A predicate over (role, text) of one ``input_text`` content item of a retained message."""


@dataclass(frozen=True, slots=True, eq=False)
class ExtensionSection:
    """One section contributed by an extension for one sampling step.

    Unlike a built-in ``Section`` there is no typed (de)serialization: the container strips null
    object fields from ``snapshot`` (a null result means "no entry"), and ``render`` receives the
    raw stored JSON in ``Known``. As for every section, ``render(Known(x))`` must return
    ``None`` when ``x`` equals the current snapshot: containers skip unchanged sections.
    """

    id: str
    """Stable section ID; persisted in rollouts, never rename it."""
    snapshot: Json
    """The precomputed comparison snapshot as JSON."""
    render: Callable[[Previous[Json]], Fragment | None]
    """Zero or one fragment describing the change from the previous state."""
    legacy_matcher: FragmentMatcher | None = None
    """Recognises text this section emitted before it was persisted; ``None``: never matches."""
    retained_matcher: FragmentMatcher | None = None
    """If set, a persisted entry is trusted only while retained history holds a match."""


class ExtensionStore(MutableMapping[str, Any]):
    """A store an extension keeps data in between steps (a plain string-keyed map).

    Keys are shared by every extension: prefix them with the extension's name.
    """

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._data[key] = value

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ExtensionStore({self._data!r})"


@dataclass(eq=False)
class ExtensionStores:
    """The stores of one session: session and thread stores, and the current turn's store."""

    session: ExtensionStore = field(default_factory=ExtensionStore)
    thread: ExtensionStore = field(default_factory=ExtensionStore)
    _turn_id: str | None = None
    _turn: ExtensionStore = field(default_factory=ExtensionStore)

    def for_turn(self, turn_id: str) -> ExtensionStore:
        """The store of ``turn_id``: the same for every step of a turn, new for a new turn."""
        if turn_id != self._turn_id:
            self._turn_id, self._turn = turn_id, ExtensionStore()
        return self._turn


@dataclass(frozen=True, slots=True)
class ExtensionEnvironment:
    """One environment of the step (Codex's ``TurnEnvironmentSelection``)."""

    id: str
    cwd: str
    is_primary: bool = False


@dataclass(frozen=True, slots=True)
class CapabilityRoot:
    """A ready capability root of the step: a folder skills and plugins are found in."""

    id: str
    """Stable id: ``<scope>:<path>``, or ``plugin:<name>:<path>`` for a plugin's root."""
    path: str
    """Canonical absolute path."""
    environment_id: str = "local"
    """The environment the root lives on (every root is local until remote executors land)."""


@dataclass(frozen=True, slots=True)
class ExtensionContext:
    """What an extension may base its contributions on (time and I/O stay outside)."""

    cwd: str
    """The primary working directory of the step."""
    model: str
    """The model slug of the turn."""
    turn_id: str
    """The ID of the turn the step belongs to."""
    thread_id: str = ""
    """The ID of the thread (session) the turn belongs to."""
    environments: tuple[ExtensionEnvironment, ...] = ()
    """The step's environments, the primary one first."""
    ready_capability_roots: tuple[CapabilityRoot, ...] = ()
    """The capability roots that exist and are ready in this step (the scanned skill roots)."""
    session_store: ExtensionStore = field(default_factory=ExtensionStore, compare=False)
    thread_store: ExtensionStore = field(default_factory=ExtensionStore, compare=False)
    turn_store: ExtensionStore = field(default_factory=ExtensionStore, compare=False)
    step_id: str = ""
    """The ID of the step being captured (new for every model request)."""


@runtime_checkable
class WorldStateExtension(Protocol):
    """A provider of extension sections, asked once per sampling step."""

    def contribute(self, ctx: ExtensionContext) -> Sequence[ExtensionSection]:
        """The sections to add to this step's world state, in rendering order."""
        ...


def load_extensions(
    entry_points: Iterable[importlib.metadata.EntryPoint],
) -> list[WorldStateExtension]:
    """Load the extension providers named by ``entry_points``, ordered by entry point name.

    Each entry point may name an object with a ``contribute`` method, or a class or
    zero-argument factory that returns one. Sorting by name makes the rendering order of
    extension sections independent of installation order.

    Raises ``WorldStateError`` naming the entry point if it cannot be imported, its factory
    fails, or what it names is not a world-state extension.
    """
    extensions: list[WorldStateExtension] = []
    for entry_point in sorted(entry_points, key=lambda ep: (ep.name, ep.value)):
        label = f"world-state extension entry point {entry_point.name!r} ({entry_point.value})"
        try:
            loaded = entry_point.load()
        except Exception as exc:
            raise WorldStateError(f"failed to load {label}: {exc!r}") from exc
        extension = loaded
        if isinstance(loaded, type) or not isinstance(loaded, WorldStateExtension):
            if not callable(loaded):
                raise WorldStateError(
                    f"{label} names a {type(loaded).__name__}, not a world-state extension"
                )
            try:
                extension = loaded()
            except Exception as exc:
                raise WorldStateError(f"failed to create {label}: {exc!r}") from exc
        if isinstance(extension, type) or not isinstance(extension, WorldStateExtension):
            raise WorldStateError(
                f"{label} produced a {type(extension).__name__} without a contribute() method"
            )
        extensions.append(extension)
    return extensions


def contribute_sections(
    extensions: Iterable[WorldStateExtension], ctx: ExtensionContext
) -> list[ExtensionSection]:
    """Ask every extension for its sections, in order, and check what comes back.

    Raises ``WorldStateError`` naming the extension if it fails or returns something that is
    not an ``ExtensionSection``.
    """
    sections: list[ExtensionSection] = []
    for extension in extensions:
        name = type(extension).__qualname__
        try:
            contributed = list(extension.contribute(ctx))
        except Exception as exc:
            raise WorldStateError(f"world-state extension {name} failed: {exc!r}") from exc
        for section in contributed:
            if not isinstance(section, ExtensionSection):
                raise WorldStateError(
                    f"world-state extension {name} contributed a {type(section).__name__}, "
                    "not an ExtensionSection"
                )
        sections.extend(contributed)
    return sections
