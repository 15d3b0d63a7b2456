"""The shared replay rules: ``Baseline`` (spec §6.3), ``PendingRollback`` (§6.1) and
``ForwardReplay`` with its observer — what ``verify``, ``rollout inspect`` and later readers use."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.jsonmerge import apply_merge_patch
from mini_codex.rollout.replay import (
    Baseline,
    BaselineChange,
    ForwardReplay,
    PendingRollback,
    ReplayObserver,
    TurnSegment,
)

_values = st.recursive(
    st.none() | st.integers(0, 3) | st.sampled_from(["a", "b"]) | st.lists(st.integers(0, 2)),
    lambda children: st.dictionaries(st.sampled_from(["x", "y", "z"]), children, max_size=3),
    max_leaves=8,
)
_objects = st.dictionaries(st.sampled_from(["x", "y", "z"]), _values, max_size=3)
_records = st.lists(
    st.one_of(
        st.tuples(st.just("full"), _objects),
        st.tuples(st.just("patch"), _objects),
        st.tuples(st.just("compacted"), st.just({})),
    ),
    max_size=8,
)


def reference(records: Sequence[tuple[str, dict[str, Any]]]) -> tuple[Any, int]:
    """Spec §6.3 as written: (the baseline, how many patches had none)."""
    baseline: Any = None
    ignored = 0
    for kind, state in records:
        if kind == "compacted":
            baseline = None
        elif kind == "full":
            baseline = state
        elif baseline is None:
            ignored += 1
        else:
            baseline = apply_merge_patch(baseline, state)
    return baseline, ignored


def step(baseline: Baseline, kind: str, state: dict[str, Any]) -> bool:
    """Feed one record; False for an ignored patch."""
    if kind == "compacted":
        baseline.reset()
    elif kind == "full":
        baseline.full(state)
    else:
        return baseline.patch(state)
    return True


@settings(max_examples=300, deadline=None)
@given(records=_records, in_place=st.booleans())
def test_a_baseline_follows_the_spec_and_never_changes_its_inputs(
    records: list[tuple[str, dict[str, Any]]], in_place: bool
) -> None:
    before = copy.deepcopy(records)
    baseline = Baseline(in_place=in_place)

    ignored = sum(not step(baseline, kind, state) for kind, state in records)

    assert (baseline.state, ignored) == reference(records)
    assert baseline.known == (baseline.state is not None)
    assert records == before


@settings(max_examples=200, deadline=None)
@given(records=_records)
def test_every_intermediate_state_stays_as_it_was_reported(
    records: list[tuple[str, dict[str, Any]]],
) -> None:
    baseline = Baseline()
    seen = []
    for kind, state in records:
        step(baseline, kind, state)
        seen.append((baseline.state, copy.deepcopy(baseline.state)))

    assert all(state == snapshot for state, snapshot in seen)


def test_a_rollback_discards_segments_until_its_user_turns_are_gone() -> None:
    pending = PendingRollback(2)
    offered = [True, False, True, True]  # newest first: user, task, user, user

    assert [pending.discards(user_turn) for user_turn in offered] == [True, True, True, False]
    assert pending.turns == 0


class Recorder(ReplayObserver):
    def __init__(self) -> None:
        self.changes: list[BaselineChange] = []
        self.rollbacks: list[tuple[int, list[TurnSegment]]] = []

    def baseline_changed(self, change: BaselineChange) -> None:
        self.changes.append(change)

    def rolled_back(self, line: int, segments: Sequence[TurnSegment]) -> None:
        self.rollbacks.append((line, list(segments)))


def test_the_observer_sees_every_change_and_rolled_back_records_never_apply() -> None:
    observer = Recorder()
    replay = ForwardReplay(observer)
    first = replay.open_segment(1, "t1")
    replay.user_input()
    replay.world_state(2, True, {"a": 1})
    replay.close_segment()
    second = replay.open_segment(3, "t2")
    replay.user_input()
    replay.world_state(4, False, {"a": 2})
    replay.close_segment()
    replay.world_state(5, False, {"b": 1})  # outside any segment: never discarded

    assert replay.roll_back(6, 1) == [second]
    assert replay.baseline == {"a": 1, "b": 1}
    assert (first.rolled_back_at, second.rolled_back_at) == (None, 6)
    assert observer.rollbacks == [(6, [second])]
    assert observer.changes == [
        BaselineChange(2, "full", None, {"a": 1}, first),
        BaselineChange(4, "patch", {"a": 1}, {"a": 2}, second, {"a": 2}),
        BaselineChange(5, "patch", {"a": 2}, {"a": 2, "b": 1}, None, {"b": 1}),
        BaselineChange(6, "rollback", {"a": 2, "b": 1}, {"a": 1, "b": 1}, None),
    ]


def test_a_patch_without_a_baseline_is_reported_and_ignored() -> None:
    observer = Recorder()
    replay = ForwardReplay(observer)
    replay.world_state(1, True, {"a": 1})
    replay.compacted(2)

    change = replay.world_state(3, False, {"a": 2})

    assert change == BaselineChange(3, "ignored_patch", None, None, None, {"a": 2})
    assert observer.changes[1:] == [BaselineChange(2, "compacted", {"a": 1}, None, None), change]
    assert replay.baseline is None


def test_a_rollback_skips_segments_already_rolled_back_and_spares_non_user_ones_the_count() -> None:
    replay = ForwardReplay()
    user_1 = replay.open_segment(1)
    replay.user_input()
    task = replay.open_segment(2)
    user_2 = replay.open_segment(3)
    replay.user_input()
    assert replay.roll_back(4, 1) == [user_2]

    assert replay.roll_back(5, 1) == [user_1, task]
    assert replay.roll_back(6, 1) == []
