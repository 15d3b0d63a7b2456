"""WorldState container, snapshot and rendering modes (spec §1.2–§1.5, §7.1 cases 2–8)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from mini_codex.errors import ProtocolError, WorldStateError
from mini_codex.jsonmerge import Json
from mini_codex.protocol.items import (
    FunctionCallOutput,
    InputImage,
    InputText,
    Message,
    OutputText,
    ResponseItem,
    developer_message,
    user_message,
)
from mini_codex.world_state import (
    ABSENT,
    UNKNOWN,
    ExtensionSection,
    Fragment,
    Known,
    Previous,
    Section,
    WorldState,
    WorldStateSnapshot,
    format_model_visible_layout,
    fragments_to_messages,
)

# --- fixtures ------------------------------------------------------------------------------------


@dataclass
class TestSnapshot:
    __test__: ClassVar[bool] = False

    value: str
    optional: str | None = None
    array: list[Any] = field(default_factory=list)


class TestSection(Section[TestSnapshot]):
    """Spec §7.1 fixture: Known with another value → its value; Unknown → "unknown"."""

    __test__: ClassVar[bool] = False
    ID: ClassVar[str] = "test"
    snapshot_type: ClassVar[Any] = TestSnapshot

    def __init__(self, value: str, optional: str | None = None, array: list[Any] | None = None):
        self.current = TestSnapshot(value=value, optional=optional, array=array or [])

    def snapshot(self) -> TestSnapshot:
        return self.current

    def render_diff(self, previous: Previous[TestSnapshot]) -> Fragment | None:
        match previous:
            case Known(snapshot=snapshot) if snapshot.value != self.current.value:
                return Fragment("developer", "", "", self.current.value)
            case Known():
                return None
            case _ if previous is UNKNOWN:
                return Fragment("developer", "", "", "unknown")
            case _:
                return None


class RecordingSection(Section[str]):
    """A section with a configurable ID that records the previous states it is rendered with."""

    snapshot_type: ClassVar[Any] = str

    def __init__(self, section_id: str, value: str, *, persist: bool = True) -> None:
        self.ID = section_id  # type: ignore[misc]
        self.value = value
        self.persist = persist
        self.seen: list[Previous[str]] = []

    def snapshot(self) -> str:
        return self.value

    def should_persist(self) -> bool:
        return self.persist

    def render_diff(self, previous: Previous[str]) -> Fragment | None:
        self.seen.append(previous)
        return Fragment("developer", f"<{self.ID}>", f"</{self.ID}>", self.value)


def bodies(fragments: list[Fragment]) -> list[str]:
    return [fragment.body for fragment in fragments]


def ext(
    section_id: str,
    snapshot: Json,
    render: Any = None,
    *,
    legacy: Any = None,
    retained: Any = None,
) -> ExtensionSection:
    def always(previous: Previous[Json]) -> Fragment:
        return Fragment("developer", f"<{section_id}>", f"</{section_id}>", str(snapshot))

    return ExtensionSection(section_id, snapshot, render or always, legacy, retained)


# --- §7.1 cases ----------------------------------------------------------------------------------


def test_snapshot_uses_stable_section_ids_and_omits_null_fields() -> None:
    world_state = WorldState([TestSection("current", None, [{"value": None}])])

    assert world_state.snapshot().to_json() == {
        "test": {"value": "current", "array": [{"value": None}]}
    }


def test_render_diff_restores_the_typed_section_snapshot() -> None:
    previous = WorldState([TestSection("before")]).snapshot()

    assert bodies(WorldState([TestSection("after")]).render_diff(previous)) == ["after"]


def test_extension_owned_section_uses_its_snapshot_and_renderer() -> None:
    def render(previous: Previous[Json]) -> Fragment | None:
        if previous == Known({"value": "before"}):
            return Fragment("developer", "<extension_test>", "</extension_test>", "after")
        return None

    world_state = WorldState([ext("extension_test", {"value": "after", "optional": None}, render)])
    previous = WorldStateSnapshot({"extension_test": {"value": "before"}})

    fragments = world_state.render_diff(previous)

    assert world_state.snapshot().to_json() == {"extension_test": {"value": "after"}}
    assert [(f.role, f.text) for f in fragments] == [
        ("developer", "<extension_test>after</extension_test>")
    ]


def test_missing_retained_fragment_is_rendered_again() -> None:
    def render(previous: Previous[Json]) -> Fragment | None:
        if previous is ABSENT:
            return Fragment("developer", "<extension_test>", "</extension_test>", "current catalog")
        return None

    def retained(role: str, text: str) -> bool:
        return role == "developer" and "current catalog" in text

    snapshot: Json = {"body": "current catalog"}
    world_state = WorldState([ext("extension_test", snapshot, render, retained=retained)])
    previous = world_state.snapshot()
    kept = [developer_message("<extension_test>current catalog</extension_test>")]

    assert bodies(world_state.render_history_diff(previous, [])) == ["current catalog"]
    assert world_state.render_history_diff(previous, kept) == []


def test_unreadable_section_snapshot_is_treated_as_unknown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    previous = WorldStateSnapshot({"test": {"invalid": True}})

    with caplog.at_level(logging.WARNING, logger="mini_codex.world_state.state"):
        fragments = WorldState([TestSection("current")]).render_diff(previous)

    assert bodies(fragments) == ["unknown"]
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert "failed to restore world-state section snapshot" in record.getMessage()
    assert "test" in record.getMessage()


def test_duplicate_section_ids_are_rejected() -> None:
    world_state = WorldState([TestSection("one")])

    with pytest.raises(WorldStateError) as info:
        world_state.add(TestSection("two"))

    assert str(info.value) == "duplicate world-state section ID: test"
    assert world_state.ids == ("test",)


def test_duplicate_extension_section_ids_are_rejected() -> None:
    world_state = WorldState([TestSection("one")])

    with pytest.raises(WorldStateError, match=r"^duplicate world-state section ID: test$"):
        world_state.add(ext("test", True))


def test_snapshot_merge_patch_changes_and_removes_nested_values() -> None:
    previous = WorldStateSnapshot(
        {
            "kept": {"same": True, "changed": "before", "removed": True},
            "removed_section": {"value": True},
        }
    )
    current = WorldStateSnapshot({"kept": {"same": True, "changed": "after"}})

    patch = current.merge_patch_from(previous)

    assert patch == {"kept": {"changed": "after", "removed": None}, "removed_section": None}
    assert previous.apply(patch) == current
    assert current.merge_patch_from(current) is None


def test_merge_patch_lists_removals_first_then_changes_sorted() -> None:
    previous = WorldStateSnapshot({"b": 1, "z": 1, "kept": {"x": 1, "gone": 1}, "a": 1})
    current = WorldStateSnapshot({"kept": {"y": 2, "x": 2}, "c": 3, "a": 2})

    patch = current.merge_patch_from(previous)

    assert patch is not None
    assert list(patch) == ["b", "z", "a", "c", "kept"]
    assert list(patch["kept"]) == ["gone", "y", "x"]  # type: ignore[arg-type]


# --- WorldStateSnapshot --------------------------------------------------------------------------


def test_snapshot_json_form_has_sorted_keys_and_round_trips() -> None:
    snapshot = WorldStateSnapshot.from_json({"b": {"y": 1, "x": 2}, "a": [None]})

    assert list(snapshot.to_json()) == ["a", "b"]
    assert list(snapshot) == ["a", "b"]
    assert WorldStateSnapshot.from_json(snapshot.to_json()) == snapshot
    assert snapshot.get("b") == {"y": 1, "x": 2}
    assert "a" in snapshot
    assert "c" not in snapshot
    assert len(snapshot) == 2


def test_snapshot_equality_is_json_exact() -> None:
    assert WorldStateSnapshot({"a": True}) != WorldStateSnapshot({"a": 1})
    assert WorldStateSnapshot({"a": 1.0}) != WorldStateSnapshot({"a": 1})
    assert WorldStateSnapshot({"a": {"x": 1, "y": 2}}) == WorldStateSnapshot(
        {"a": {"y": 2, "x": 1}}
    )


@pytest.mark.parametrize("value", [None, True, [], "state", 3])
def test_snapshot_from_json_rejects_non_objects(value: Json) -> None:
    with pytest.raises(ProtocolError, match="must be a JSON object"):
        WorldStateSnapshot.from_json(value)


def test_snapshot_apply_rejects_non_object_patch() -> None:
    snapshot = WorldStateSnapshot({"a": 1})

    with pytest.raises(ProtocolError, match="must be a JSON object"):
        snapshot.apply([])  # type: ignore[arg-type]
    assert snapshot == WorldStateSnapshot({"a": 1})


def test_snapshot_apply_shares_untouched_sections_and_leaves_input_unchanged() -> None:
    big: Json = {"paths": [f"f{i}" for i in range(100)]}
    snapshot = WorldStateSnapshot({"big": big, "small": {"v": 1}})

    result = snapshot.apply({"small": {"v": 2}, "new": {"x": None, "y": 1}})

    assert result == WorldStateSnapshot({"big": big, "small": {"v": 2}, "new": {"y": 1}})
    assert result["big"] is big
    assert snapshot == WorldStateSnapshot({"big": big, "small": {"v": 1}})
    assert snapshot.apply({}) is snapshot


def test_merge_patch_of_a_snapshot_with_a_null_member_is_an_error() -> None:
    current = WorldStateSnapshot.from_json({"a": {"x": None}})

    with pytest.raises(WorldStateError, match="cannot diff world-state snapshots"):
        current.merge_patch_from(WorldStateSnapshot({}))


# --- snapshot(): §1.2 ----------------------------------------------------------------------------


class BrokenEncodeSection(RecordingSection):
    def encode_snapshot(self, snapshot: str) -> Json:
        raise ValueError("cannot encode")


class NullSection(RecordingSection):
    def encode_snapshot(self, snapshot: str) -> Json:
        return None


def test_snapshot_skips_unpersisted_unencodable_and_null_sections(
    caplog: pytest.LogCaptureFixture,
) -> None:
    world_state = WorldState(
        [
            RecordingSection("kept", "v"),
            RecordingSection("tools", "v", persist=False),
            BrokenEncodeSection("broken", "v"),
            NullSection("null", "v"),
            ext("ext_null", None),
            ext("ext_kept", {"a": None, "b": [None]}),
        ]
    )

    with caplog.at_level(logging.ERROR, logger="mini_codex.world_state.state"):
        snapshot = world_state.snapshot()

    assert snapshot == WorldStateSnapshot({"kept": "v", "ext_kept": {"b": [None]}})
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.ERROR, "failed to serialize world-state section snapshot (section broken)"),
        (logging.ERROR, "world-state section snapshot cannot be null (section null)"),
    ]


def test_snapshot_is_computed_once_and_invalidated_by_add() -> None:
    calls: list[str] = []

    class Counting(RecordingSection):
        def snapshot(self) -> str:
            calls.append(self.ID)
            return self.value

    world_state = WorldState([Counting("a", "1")])
    first = world_state.snapshot()
    world_state.render_diff(WorldStateSnapshot({"a": "0"}))

    assert world_state.snapshot() is first
    assert calls == ["a"]

    world_state.add(Counting("b", "2"))

    assert world_state.snapshot() == WorldStateSnapshot({"a": "1", "b": "2"})
    assert calls == ["a", "b"]


def test_unpersisted_section_is_absent_next_time_and_removed_by_the_patch() -> None:
    before = WorldState([RecordingSection("tools", "v")])
    after_section = RecordingSection("tools", "v", persist=False)
    after = WorldState([after_section])

    fragments = WorldState([RecordingSection("tools", "w")]).render_diff(after.snapshot())

    assert after.snapshot().merge_patch_from(before.snapshot()) == {"tools": None}
    assert bodies(fragments) == ["w"]


# --- render modes --------------------------------------------------------------------------------


def test_render_full_gives_every_section_absent_in_insertion_order() -> None:
    sections = [RecordingSection("b", "1"), RecordingSection("a", "2")]

    fragments = WorldState(sections).render_full()

    assert bodies(fragments) == ["1", "2"]
    assert [s.seen for s in sections] == [[ABSENT], [ABSENT]]


def test_render_diff_gives_known_for_present_ids_and_absent_otherwise() -> None:
    old, new = RecordingSection("old", "2"), RecordingSection("new", "1")

    fragments = WorldState([old, new]).render_diff(WorldStateSnapshot({"old": "1"}))

    assert bodies(fragments) == ["2", "1"]
    assert (old.seen, new.seen) == ([Known("1")], [ABSENT])


def test_render_diff_skips_sections_whose_entry_is_unchanged() -> None:
    unchanged = RecordingSection("same", "1")

    fragments = WorldState([unchanged]).render_diff(WorldStateSnapshot({"same": "1"}))

    assert fragments == []
    assert unchanged.seen == []


@dataclass(frozen=True)
class PathsSnapshot:
    paths: tuple[str, ...]


class LossySection(Section[PathsSnapshot]):
    """Persists only the first path, like the workspace section caps its persisted list."""

    ID: ClassVar[str] = "workspace"
    snapshot_type: ClassVar[Any] = PathsSnapshot

    def __init__(self, *paths: str) -> None:
        self.current = PathsSnapshot(paths)
        self.seen: list[Previous[PathsSnapshot]] = []

    def snapshot(self) -> PathsSnapshot:
        return self.current

    def encode_snapshot(self, snapshot: PathsSnapshot) -> Json:
        return {"paths": list(snapshot.paths[:1])}

    def render_diff(self, previous: Previous[PathsSnapshot]) -> Fragment | None:
        self.seen.append(previous)
        return Fragment("developer", "", "", ",".join(self.current.paths))


def test_render_diff_against_a_live_world_state_uses_the_exact_typed_snapshot() -> None:
    previous = WorldState([LossySection("a", "b")])
    current_section = LossySection("a", "c")

    fragments = WorldState([current_section]).render_diff(previous)

    assert bodies(fragments) == ["a,c"]
    assert current_section.seen == [Known(PathsSnapshot(("a", "b")))]


def test_render_diff_against_the_persisted_snapshot_sees_the_lossy_form() -> None:
    previous = WorldState([LossySection("a", "b")]).snapshot()
    changed, same_entry = LossySection("z", "c"), LossySection("a", "c")

    WorldState([changed]).render_diff(previous)
    WorldState([same_entry]).render_diff(previous)

    assert changed.seen == [Known(PathsSnapshot(("a",)))]
    assert same_entry.seen == []  # equal persisted entries: skipped without rendering


def test_render_diff_against_a_live_world_state_skips_equal_and_handles_unpersisted() -> None:
    same, hidden, gone = (
        RecordingSection("same", "1"),
        RecordingSection("hidden", "1"),
        RecordingSection("gone", "1"),
    )
    previous = WorldState(
        [RecordingSection("same", "1"), RecordingSection("hidden", "0", persist=False)]
    )

    fragments = WorldState([same, hidden, gone]).render_diff(previous)

    assert bodies(fragments) == ["1", "1"]
    assert (same.seen, hidden.seen, gone.seen) == ([], [ABSENT], [ABSENT])


def test_render_diff_against_a_live_world_state_passes_extension_json() -> None:
    seen: list[Previous[Json]] = []

    def render(previous: Previous[Json]) -> Fragment | None:
        seen.append(previous)
        return Fragment("developer", "", "", "changed")

    previous = WorldState([ext("e", {"v": 1, "n": None}, render)])

    assert WorldState([ext("e", {"v": 1}, render)]).render_diff(previous) == []
    assert bodies(WorldState([ext("e", {"v": True}, render)]).render_diff(previous)) == ["changed"]
    assert seen == [Known({"v": 1})]


# --- render_history_diff -------------------------------------------------------------------------


def agents_md_matcher(role: str, text: str) -> bool:
    stripped = text.strip()
    return role == "user" and stripped.startswith("# AGENTS.md") and stripped.endswith("</X>")


class LegacySection(RecordingSection):
    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        return agents_md_matcher(role, text)


def test_legacy_fragment_without_baseline_entry_is_unknown() -> None:
    section = LegacySection("legacy", "v")
    history = [user_message("# AGENTS.md instructions\n<X>old</X>")]

    WorldState([section]).render_history_diff(None, history)
    WorldState([section]).render_history_diff(WorldStateSnapshot({"other": 1}), history)
    WorldState([section]).render_history_diff(WorldStateSnapshot({"legacy": "old"}), history)
    WorldState([section]).render_history_diff(None, [])

    assert section.seen == [UNKNOWN, UNKNOWN, Known("old"), ABSENT]


def test_legacy_fragment_bundled_in_a_multi_part_message_is_detected() -> None:
    section = LegacySection("legacy", "v")
    bundled = Message(
        role="user",
        content=[
            InputText(text="<environment_context>x</environment_context>"),
            InputImage(image_url="data:,"),
            InputText(text="  # AGENTS.md instructions for /r\n<X>old</X>\n"),
        ],
    )

    WorldState([section]).render_history_diff(None, [bundled])

    assert section.seen == [UNKNOWN]


def test_output_text_and_non_message_items_never_match() -> None:
    section = LegacySection("legacy", "v")
    text = "# AGENTS.md instructions\n<X>old</X>"
    history: list[ResponseItem] = [
        Message(role="user", content=[OutputText(text=text)]),
        FunctionCallOutput(call_id="c", output=text),
        developer_message(text),  # wrong role for this matcher
    ]

    WorldState([section]).render_history_diff(None, history)

    assert section.seen == [ABSENT]


def test_extension_legacy_matcher_gives_unknown() -> None:
    seen: list[Previous[Json]] = []

    def render(previous: Previous[Json]) -> Fragment | None:
        seen.append(previous)
        return None

    world_state = WorldState([ext("skills", {"a": 1}, render, legacy=agents_md_matcher)])

    world_state.render_history_diff(None, [user_message("# AGENTS.md\n</X>")])

    assert seen == [UNKNOWN]


def test_retained_matcher_is_consulted_only_with_a_baseline_entry() -> None:
    seen: list[Previous[Json]] = []

    def render(previous: Previous[Json]) -> Fragment | None:
        seen.append(previous)
        return None

    def retained(role: str, text: str) -> bool:
        return "catalog" in text

    world_state = WorldState([ext("skills", {"a": 2}, render, retained=retained)])
    history = [developer_message("catalog")]

    world_state.render_history_diff(WorldStateSnapshot({"skills": {"a": 1}}), history)
    world_state.render_history_diff(WorldStateSnapshot({"skills": {"a": 1}}), [])
    world_state.render_history_diff(None, history)

    assert seen == [Known({"a": 1}), ABSENT, ABSENT]


# --- host_skills ordering ------------------------------------------------------------------------


def test_host_skills_goes_just_before_permissions_when_present() -> None:
    world_state = WorldState(
        [
            RecordingSection("model", "m"),
            RecordingSection("agents_md", "a"),
            RecordingSection("permissions", "p"),
            RecordingSection("environments", "e"),
        ]
    )

    world_state.add(ext("other", 1))
    world_state.add(ext("host_skills", 2))

    assert world_state.ids == (
        "model",
        "agents_md",
        "host_skills",
        "permissions",
        "environments",
        "other",
    )
    assert bodies(world_state.render_full()) == ["m", "a", "2", "p", "e", "1"]


def test_host_skills_is_appended_without_permissions() -> None:
    world_state = WorldState([RecordingSection("model", "m")])

    world_state.add(ext("host_skills", 2))
    world_state.add(RecordingSection("permissions", "p"))

    assert world_state.ids == ("model", "host_skills", "permissions")


def test_builtin_section_named_host_skills_is_not_moved() -> None:
    world_state = WorldState([RecordingSection("permissions", "p")])

    world_state.add(RecordingSection("host_skills", "s"))

    assert world_state.ids == ("permissions", "host_skills")


# --- messages ------------------------------------------------------------------------------------


def test_consecutive_same_role_fragments_merge_into_one_message() -> None:
    fragments = [
        Fragment("developer", "<a>", "</a>", "1"),
        Fragment("developer", "", "", "2"),
        Fragment("user", "<c>", "</c>", "3"),
        Fragment("user", "<d>", "</d>", "4", separate_message=True),
        Fragment("user", "<e>", "</e>", "5"),
        Fragment("developer", "<f>", "</f>", "6"),
    ]

    assert fragments_to_messages(fragments) == [
        Message(role="developer", content=[InputText(text="<a>1</a>"), InputText(text="2")]),
        Message(role="user", content=[InputText(text="<c>3</c>")]),
        Message(role="user", content=[InputText(text="<d>4</d>")]),
        Message(role="user", content=[InputText(text="<e>5</e>")]),
        Message(role="developer", content=[InputText(text="<f>6</f>")]),
    ]
    assert fragments_to_messages([]) == []


def test_merged_messages_are_detected_part_by_part() -> None:
    messages = fragments_to_messages(
        [
            Fragment("developer", "<p>", "</p>", "x"),
            Fragment("user", "", "", "ignored"),
            Fragment("user", "# AGENTS.md", "</X>", " old "),
        ]
    )
    section = LegacySection("legacy", "v")

    WorldState([section]).render_history_diff(None, messages)

    assert section.seen == [UNKNOWN]


def test_model_visible_layout_lists_one_line_per_item_and_part() -> None:
    items = [
        developer_message("<PERMISSIONS>\nsandbox: read-only"),
        Message(
            role="user",
            content=[InputText(text="\n\n# AGENTS.md instructions\n"), InputImage(image_url="x")],
        ),
        user_message("x" * 80),
    ]

    assert format_model_visible_layout(items) == [
        "00:message/developer:<PERMISSIONS>",
        "01:message/user[2]:",
        "    [01] # AGENTS.md instructions",
        "    [02] <image>",
        f"02:message/user:{'x' * 60}",
    ]
