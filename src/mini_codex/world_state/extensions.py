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

and registered in the extension package's metadata::

    [project.entry-points."mini_codex.world_state"]
    skills = "my_package.skills:Skills"

The entry point may name an extension object, or a class / zero-argument factory returning one.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from mini_codex.errors import WorldStateError
from mini_codex.jsonmerge import Json
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import Previous

__all__ = [
    "EXTENSION_ENTRY_POINT_GROUP",
    "ExtensionContext",
    "ExtensionSection",
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


@dataclass(frozen=True, slots=True)
class ExtensionContext:
    """What an extension may base its contributions on (time and I/O stay outside)."""

    cwd: str
    """The primary working directory of the step."""
    model: str
    """The model slug of the turn."""
    turn_id: str
    """The ID of the turn the step belongs to."""


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
