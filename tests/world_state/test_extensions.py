"""Extension sections and their entry-point loading (spec §1.3, DESIGN §4)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from mini_codex.errors import WorldStateError
from mini_codex.world_state import (
    EXTENSION_ENTRY_POINT_GROUP,
    ExtensionContext,
    ExtensionSection,
    Fragment,
    WorldState,
    WorldStateSnapshot,
    contribute_sections,
    load_extensions,
)

MODULE = "mini_codex_test_world_state_extensions"

MODULE_SOURCE = textwrap.dedent(
    """
    from mini_codex.world_state import ExtensionSection, Fragment

    def render(previous):
        return Fragment("developer", "<skills>", "</skills>", "catalog")

    class Skills:
        def contribute(self, ctx):
            return [ExtensionSection("host_skills", {"cwd": ctx.cwd, "n": None}, render)]

    class Notes:
        def __init__(self, label="notes"):
            self.label = label

        def contribute(self, ctx):
            return [ExtensionSection(self.label, {"turn": ctx.turn_id}, render)]

    def make_notes():
        return Notes("factory_notes")

    notes_instance = Notes("instance_notes")

    def broken_factory():
        raise RuntimeError("boom")

    not_an_extension = 42

    class NoContribute:
        pass

    class BadContribution:
        def contribute(self, ctx):
            return ["not a section"]
    """
)


@pytest.fixture
def extension_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / f"{MODULE}.py").write_text(MODULE_SOURCE)
    monkeypatch.syspath_prepend(tmp_path)
    yield MODULE
    sys.modules.pop(MODULE, None)


def entry_point(name: str, attr: str, module: str = MODULE) -> EntryPoint:
    return EntryPoint(name=name, value=f"{module}:{attr}", group=EXTENSION_ENTRY_POINT_GROUP)


CTX = ExtensionContext(cwd="/repo", model="gpt-test", turn_id="turn-1")


def test_entry_point_group_name() -> None:
    assert EXTENSION_ENTRY_POINT_GROUP == "mini_codex.world_state"


def test_load_extensions_accepts_classes_factories_and_instances_sorted_by_name(
    extension_module: str,
) -> None:
    extensions = load_extensions(
        [
            entry_point("c_instance", "notes_instance"),
            entry_point("a_class", "Skills"),
            entry_point("b_factory", "make_notes"),
        ]
    )

    sections = contribute_sections(extensions, CTX)

    assert [type(e).__name__ for e in extensions] == ["Skills", "Notes", "Notes"]
    assert [(s.id, s.snapshot) for s in sections] == [
        ("host_skills", {"cwd": "/repo", "n": None}),
        ("factory_notes", {"turn": "turn-1"}),
        ("instance_notes", {"turn": "turn-1"}),
    ]


@pytest.mark.parametrize(
    ("attr", "module", "message"),
    [
        ("Skills", "mini_codex_no_such_module", "failed to load"),
        ("no_such_attr", MODULE, "failed to load"),
        ("broken_factory", MODULE, "failed to create"),
        ("not_an_extension", MODULE, "names a int, not a world-state extension"),
        ("NoContribute", MODULE, "produced a NoContribute without a contribute"),
    ],
)
def test_broken_entry_point_raises_naming_it(
    extension_module: str, attr: str, module: str, message: str
) -> None:
    with pytest.raises(WorldStateError) as info:
        load_extensions([entry_point("broken_one", attr, module)])

    assert "world-state extension entry point 'broken_one'" in str(info.value)
    assert f"({module}:{attr})" in str(info.value)
    assert message in str(info.value)


def test_contribution_that_is_not_a_section_is_rejected(extension_module: str) -> None:
    extensions = load_extensions([entry_point("bad", "BadContribution")])

    with pytest.raises(WorldStateError, match="BadContribution contributed a str"):
        contribute_sections(extensions, CTX)


def test_loaded_extension_sections_join_the_world_state(extension_module: str) -> None:
    contributed = contribute_sections(load_extensions([entry_point("skills", "Skills")]), CTX)
    world_state = WorldState(
        [ExtensionSection("permissions", "p", lambda previous: None), *contributed]
    )

    assert world_state.ids == ("host_skills", "permissions")
    assert world_state.snapshot() == WorldStateSnapshot(
        {"host_skills": {"cwd": "/repo"}, "permissions": "p"}
    )
    assert world_state.render_full() == [Fragment("developer", "<skills>", "</skills>", "catalog")]
