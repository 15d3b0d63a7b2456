"""ContextManager baseline rules (spec §3, §7.3; DESIGN I3, I4)."""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.context import ContextManager, is_user_turn_start
from mini_codex.jsonmerge import Json
from mini_codex.protocol.items import (
    FunctionCall,
    FunctionCallOutput,
    InputImage,
    Message,
    ResponseItem,
    assistant_message,
    developer_message,
    user_message,
)
from mini_codex.protocol.rollout import WorldStateItem
from mini_codex.world_state import (
    UNKNOWN,
    ExtensionSection,
    Fragment,
    Known,
    Previous,
    Section,
    WorldState,
    WorldStateSnapshot,
    markers_match,
)

AGENTS_START = "# AGENTS.md instructions"
AGENTS_END = "</INSTRUCTIONS>"


def instructions(text: str) -> Fragment:
    return Fragment("user", AGENTS_START, AGENTS_END, "\n\n<INSTRUCTIONS>\n" + text + "\n")


class TestWorldStateSection(Section[bool]):
    """Spec §7.3 fixture: ID "test", snapshot ``true``, AGENTS.md legacy matcher."""

    __test__: ClassVar[bool] = False
    ID: ClassVar[str] = "test"
    snapshot_type: ClassVar[Any] = bool

    def snapshot(self) -> bool:
        return True

    def render_diff(self, previous: Previous[bool]) -> Fragment | None:
        if previous == Known(True):
            return None
        if previous is UNKNOWN:
            return instructions("unknown")
        return instructions("test")

    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        return role == "user" and markers_match(AGENTS_START, AGENTS_END, text)


def fresh_world_state() -> WorldState:
    return WorldState([TestWorldStateSection()])


FULL_TRUE = WorldStateItem(full=True, state={"test": True})


# --- §7.3 ----------------------------------------------------------------------------------------


def test_world_state_baseline_deduplicates_until_history_is_replaced() -> None:
    history = ContextManager()

    first = history.update_world_state(fresh_world_state())
    second = history.update_world_state(fresh_world_state())
    history.replace([])
    third = history.update_world_state(fresh_world_state())

    assert first == ([instructions("test")], FULL_TRUE)
    assert second == ([], None)
    assert third == ([instructions("test")], FULL_TRUE)


def test_world_state_reconciles_matching_legacy_history_once() -> None:
    history = ContextManager([user_message(instructions("legacy").text)])

    first_fragments, first_item = history.update_world_state(fresh_world_state())
    second = history.update_world_state(fresh_world_state())

    assert [f.body for f in first_fragments] == ["\n\n<INSTRUCTIONS>\nunknown\n"]
    assert first_fragments == [instructions("unknown")]
    assert first_item == FULL_TRUE
    assert second == ([], None)


# --- baseline rules ------------------------------------------------------------------------------


def silent(previous: Previous[Json]) -> Fragment | None:
    return None


def test_no_baseline_writes_a_full_item_even_when_nothing_rendered() -> None:
    history = ContextManager()

    assert history.update_world_state(WorldState()) == (
        [],
        WorldStateItem(full=True, state={}),
    )
    assert history.world_state_baseline == WorldStateSnapshot({})

    world_state = WorldState([ExtensionSection("quiet", {"a": 1}, silent)])
    history.set_world_state_baseline(None)

    assert history.update_world_state(world_state) == (
        [],
        WorldStateItem(full=True, state={"quiet": {"a": 1}}),
    )


def test_changed_world_state_writes_a_patch_and_always_replaces_the_baseline() -> None:
    history = ContextManager(world_state_baseline=WorldStateSnapshot({"quiet": {"a": 1, "b": 1}}))
    world_state = WorldState([ExtensionSection("quiet", {"a": 2, "b": 1}, silent)])

    result = history.update_world_state(world_state)

    assert result == ([], WorldStateItem(full=False, state={"quiet": {"a": 2}}))
    assert history.world_state_baseline == world_state.snapshot()


def baseline_after(action: str) -> WorldStateSnapshot | None:
    call = FunctionCall(name="shell", arguments="{}", call_id="c1")
    history = ContextManager(
        [user_message("hi"), call, FunctionCallOutput(call_id="c1", output="ok")],
        world_state_baseline=WorldStateSnapshot({"test": True}),
    )
    match action:
        case "record_items":
            history.record_items([assistant_message("done")])
        case "replace":
            history.replace(history.items)
        case "remove_first_item":
            history.remove_first_item()
        case "drop_last_n_user_turns(0)":
            history.drop_last_n_user_turns(0)
        case "drop_last_n_user_turns(1)":
            history.drop_last_n_user_turns(1)
        case "for_prompt":
            history.for_prompt()
    return history.world_state_baseline


def test_history_rewrites_clear_the_baseline_and_appends_do_not() -> None:
    actions = [
        "record_items",
        "for_prompt",
        "replace",
        "remove_first_item",
        "drop_last_n_user_turns(0)",
        "drop_last_n_user_turns(1)",
    ]

    assert {action: baseline_after(action) for action in actions} == {
        "record_items": WorldStateSnapshot({"test": True}),
        "for_prompt": WorldStateSnapshot({"test": True}),
        "replace": None,
        "remove_first_item": None,
        "drop_last_n_user_turns(0)": None,
        "drop_last_n_user_turns(1)": None,
    }


def test_update_after_a_rewrite_writes_a_full_item_again() -> None:
    history = ContextManager()
    history.update_world_state(fresh_world_state())
    history.record_items([user_message("hi")])
    history.remove_first_item()

    assert history.update_world_state(fresh_world_state()) == ([instructions("test")], FULL_TRUE)


# --- history editing -----------------------------------------------------------------------------


def test_remove_first_item_also_removes_the_other_half_of_a_call_pair() -> None:
    call = FunctionCall(name="shell", arguments="{}", call_id="c1")
    other = FunctionCall(name="shell", arguments="{}", call_id="c2")
    history = ContextManager(
        [
            call,
            other,
            FunctionCallOutput(call_id="c2", output="2"),
            FunctionCallOutput(call_id="c1", output="1"),
        ]
    )

    removed = history.remove_first_item()

    assert removed == call
    assert history.items == (other, FunctionCallOutput(call_id="c2", output="2"))
    assert ContextManager().remove_first_item() is None


def conversation() -> list[ResponseItem]:
    return [
        developer_message("<permissions instructions>x</permissions instructions>"),
        user_message("# AGENTS.md instructions for /r\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>"),
        user_message("<environment_context>x</environment_context>"),
        user_message("first"),
        assistant_message("one"),
        user_message("  <turn_aborted>"),
        user_message("second"),
        assistant_message("two"),
        Message(role="user", content=[InputImage(image_url="data:,")]),
        assistant_message("three"),
    ]


def test_user_turns_start_at_user_input_not_contextual_messages() -> None:
    assert [is_user_turn_start(item) for item in conversation()] == [
        False,
        False,
        False,
        True,
        False,
        False,
        True,
        False,
        True,
        False,
    ]


def test_drop_last_n_user_turns_cuts_before_the_nth_last_user_turn() -> None:
    items = conversation()

    def after_drop(n: int) -> tuple[ResponseItem, ...]:
        history = ContextManager(items)
        history.drop_last_n_user_turns(n)
        return history.items

    assert after_drop(0) == tuple(items)
    assert after_drop(1) == tuple(items[:8])
    assert after_drop(2) == tuple(items[:6])
    assert after_drop(3) == tuple(items[:3])
    assert after_drop(10) == tuple(items[:3])


def test_items_is_a_snapshot_of_history() -> None:
    history = ContextManager([user_message("a")])
    items = history.items

    history.record_items([user_message("b")])

    assert items == (user_message("a"),)
    assert len(history) == 2


# --- law: patches reproduce snapshots ------------------------------------------------------------

SECTION_IDS = ["alpha", "beta", "gamma"]
json_leaves = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["x", "y"])
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3)
    ),
    max_leaves=8,
)
world_values = st.dictionaries(st.sampled_from(SECTION_IDS), json_values)


def build(values: dict[str, Json]) -> WorldState:
    def render(value: Json) -> Any:
        def render_diff(previous: Previous[Json]) -> Fragment | None:
            # A null snapshot is never persisted, so it would be Absent (and render) every time.
            return None if value is None else Fragment("developer", "", "", repr(value))

        return render_diff

    return WorldState(
        ExtensionSection(section_id, value, render(value)) for section_id, value in values.items()
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(world_values, min_size=1, max_size=6))
def test_patches_applied_to_the_previous_baseline_reproduce_each_snapshot(
    sequence: list[dict[str, Json]],
) -> None:
    history = ContextManager()
    baseline: WorldStateSnapshot | None = None
    for values in sequence:
        world_state = build(values)
        fragments, item = history.update_world_state(world_state)
        snapshot = world_state.snapshot()
        if baseline is None:
            assert item == WorldStateItem(full=True, state=snapshot.to_json())
            assert len(fragments) == len(snapshot)
        elif item is None:
            assert snapshot == baseline
            assert fragments == []
        else:
            assert not item.full
            assert baseline.apply(item.state) == snapshot
            # Exactly the sections the patch adds or changes are rendered (removals cannot be).
            assert len(fragments) == sum(value is not None for value in item.state.values())
        baseline = snapshot

        # An unchanged world state (rebuilt from the same values) emits nothing.
        assert history.update_world_state(build(values)) == ([], None)
        assert world_state.render_diff(world_state.snapshot()) == []
        assert build(values).render_diff(world_state) == []
