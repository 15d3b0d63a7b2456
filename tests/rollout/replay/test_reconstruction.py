"""Reconstruction behaviours of spec/codex-worldstate.md §7.4 (cases 24–50), named after the spec.

Every rollout is built as JSON lines and replayed four ways: typed lines in file order
(``reconstruct``), typed lines newest first with early exit (``reconstruct_from_newest``), and
from a real file through the fast path (``replay_file`` and the tail-bounded
``load_resume_state``). All four must agree before the spec's expectation is checked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_codex.context import ContextManager
from mini_codex.protocol import (
    Message,
    OutputText,
    RolloutLine,
    TurnContextItem,
    assistant_message,
    parse_response_item,
    user_message,
)
from mini_codex.rollout import (
    MALFORMED_CHECKPOINT,
    PATCH_WITHOUT_BASELINE,
    PreviousTurnSettings,
    Reconstructed,
    WindowInfo,
    checkpoint_payload,
    load_resume_state,
    reconstruct,
    reconstruct_from_newest,
    replay_file,
)
from mini_codex.world_state.messages import fragments_to_messages
from mini_codex.world_state.sections.agents_md import AgentsMdSection
from mini_codex.world_state.snapshot import WorldStateSnapshot
from mini_codex.world_state.state import WorldState

Builder = Any
FILE_HEADER = (
    b'{"timestamp":"2026-08-22T00:00:00.000Z","type":"session_meta","payload":{"id":"t"}}\n'
)
"""The ``new_rollout`` fixture: the ``RolloutBuilder`` class of ``conftest.py``."""


def _key(result: Reconstructed) -> tuple[Any, ...]:
    return (
        result.history,
        result.world_state,
        result.reference_context,
        result.previous_turn_settings,
        result.window,
    )


@pytest.fixture
def replay(tmp_path: Path) -> Any:
    """Replay a builder four ways, check they agree, return the file-order result."""
    counter = iter(range(1_000_000))

    def run(rollout: Any) -> Reconstructed:
        lines = rollout.typed()
        full = reconstruct(lines)
        newest = reconstruct_from_newest(reversed(lines))
        path = tmp_path / f"rollout-{next(counter)}.jsonl"
        # A file must open with a session_meta (the reader refuses anything else); the
        # in-memory replays above see the builder's lines as they are.
        first = rollout.lines[0]["type"] if rollout.lines else None
        path.write_bytes((b"" if first == "session_meta" else FILE_HEADER) + rollout.jsonl())
        assert _key(newest) == _key(full)
        assert _key(replay_file(path)) == _key(full)
        assert _key(load_resume_state(path)) == _key(full)
        return full

    return run


def ctx(turn_id: str | None, model: str = "model-a") -> TurnContextItem:
    """The turn context ``new_rollout.turn_context(turn_id, model)`` writes."""
    return TurnContextItem.model_validate(
        {
            "cwd": "/repo",
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write"},
            "model": model,
            "summary": "auto",
            **({"turn_id": turn_id} if turn_id is not None else {}),
        }
    )


def settings(model: str, comp_hash: str | None = None, realtime: bool | None = None) -> Any:
    return PreviousTurnSettings(model, comp_hash, realtime)


def test_record_initial_history_reconstructs_typed_inter_agent_message(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().inter_agent("continue with the review")
    payload = new_rollout.inter_agent_payload("continue with the review")
    expected = Message(
        role="assistant",
        content=[OutputText(text=json.dumps(payload, separators=(",", ":")))],
        phase="commentary",
    )

    result = replay(rollout)

    assert result.history == (expected,)
    assert (result.reference_context, result.previous_turn_settings) == (None, None)


def test_record_initial_history_ignores_security_risk_scores(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().user("hello").line("security_risk_score", {"score": 0.7})

    result = replay(rollout)

    assert result.history == (user_message("hello"),)
    assert result.stats.unknown_items == 1


def test_record_initial_history_restores_world_state_baseline(
    new_rollout: Builder, replay: Any
) -> None:
    world_state = WorldState([AgentsMdSection("use the project formatter", "/repo")])
    rendered = fragments_to_messages(world_state.render_full())
    rollout = new_rollout().turn_started("t1").user_message_event("hi").turn_context("t1")
    rollout.items(message.to_json() for message in rendered)
    rollout.world_state(world_state.snapshot().to_json()).turn_complete("t1")

    result = replay(rollout)
    assert result.world_state is not None
    resumed = ContextManager(
        result.history, world_state_baseline=WorldStateSnapshot.from_json(result.world_state)
    )
    fragments, item = resumed.update_world_state(world_state)

    assert (fragments, item) == ([], None)
    assert list(resumed.items) == rendered
    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context == ctx("t1")


def test_record_initial_history_resumed_bare_turn_context_does_not_hydrate_previous_turn_settings(
    new_rollout: Builder, replay: Any
) -> None:
    result = replay(new_rollout().turn_context("t1"))

    assert (result.world_state, result.previous_turn_settings, result.reference_context) == (
        None,
        None,
        None,
    )


def test_record_initial_history_resumed_hydrates_previous_turn_settings_from_lifecycle_turn_with_missing_turn_context_id(  # noqa: E501
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().turn_started("t1").user_message_event("hi").user("hi")
    rollout.turn_context(None, "model-a", comp_hash="comp-hash-a", realtime_active=True)
    rollout.assistant("hello").turn_complete("t1")

    result = replay(rollout)

    assert result.previous_turn_settings == settings("model-a", "comp-hash-a", True)


def _two_turns_then_rollback(rollout: Any, *, complete_second: bool) -> None:
    rollout.turn_started("t1").user_message_event("turn 1").user("turn 1")
    rollout.turn_context("t1", "model-a").world_state({"test": {"environment": "first"}})
    rollout.assistant("reply 1").turn_complete("t1")
    rollout.turn_started("t2").user_message_event("turn 2").user("turn 2")
    rollout.turn_context("t2", "model-b")
    rollout.world_state({"test": {"environment": "rolled-back"}}, full=False)
    rollout.assistant("reply 2")
    if complete_second:
        rollout.turn_complete("t2")
    rollout.rolled_back(1)


def test_reconstruct_history_rollback_keeps_history_and_metadata_in_sync_for_completed_turns(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout()
    _two_turns_then_rollback(rollout, complete_second=True)

    result = replay(rollout)

    assert result.history == (user_message("turn 1"), assistant_message("reply 1"))
    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context == ctx("t1")
    assert result.world_state == {"test": {"environment": "first"}}


def test_reconstruct_history_rollback_keeps_history_and_metadata_in_sync_for_incomplete_turn(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout()
    _two_turns_then_rollback(rollout, complete_second=False)

    result = replay(rollout)

    assert result.history == (user_message("turn 1"), assistant_message("reply 1"))
    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context == ctx("t1")
    assert result.world_state == {"test": {"environment": "first"}}


def test_reconstruct_history_rollback_skips_non_user_turns_for_history_and_metadata(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout()
    rollout.completed_user_turn("t1", "user 1", items=[new_rollout.assistant_item("a1")])
    rollout.completed_user_turn(
        "t2", "user 2", model="model-b", items=[new_rollout.assistant_item("a2")]
    )
    rollout.turn_started("t3").world_state({}).turn_context("t3", "model-c")
    rollout.assistant("standalone").turn_complete("t3")
    rollout.rolled_back(1)

    result = replay(rollout)

    assert result.history == (user_message("user 1"), assistant_message("a1"))
    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context == ctx("t1")


def test_reconstruct_history_rollback_counts_inter_agent_assistant_turns(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout()
    rollout.completed_user_turn("t1", "user 1", items=[new_rollout.assistant_item("a1")])
    rollout.turn_started("t2").turn_context("t2", "model-b")
    rollout.item(new_rollout.inter_agent_assistant_item("do the next step"))
    rollout.assistant("worker reply").turn_complete("t2")
    rollout.rolled_back(1)

    result = replay(rollout)

    assert result.history == (user_message("user 1"), assistant_message("a1"))
    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context == ctx("t1")


def test_reconstruct_history_rollback_clears_history_and_metadata_when_exceeding_user_turns(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn(
        "t1", "only turn", items=[new_rollout.assistant_item("reply")]
    )
    rollout.rolled_back(99)

    result = replay(rollout)

    assert (result.history, result.previous_turn_settings, result.reference_context) == (
        (),
        None,
        None,
    )


def test_record_initial_history_resumed_rollback_skips_only_user_turns(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "user 1")
    rollout.turn_started("t2").turn_complete("t2").rolled_back(1)

    result = replay(rollout)

    assert (result.history, result.previous_turn_settings, result.reference_context) == (
        (),
        None,
        None,
    )


def test_record_initial_history_resumed_rollback_drops_incomplete_user_turn_compaction_metadata(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn(
        "t1", "user 1", items=[new_rollout.assistant_item("a1")]
    )
    rollout.turn_started("t2").user_message_event("user 2").user("user 2")
    rollout.compacted("summary", [new_rollout.user_item("user 2")], window_number=1)
    rollout.rolled_back(1)

    result = replay(rollout)

    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context == ctx("t1")
    assert result.history == (user_message("user 1"), assistant_message("a1"))


def test_record_initial_history_resumed_bare_turn_context_does_not_seed_reference_context_item(
    new_rollout: Builder, replay: Any
) -> None:
    result = replay(new_rollout().turn_context(None, "model-a"))

    assert result.reference_context is None


def test_record_initial_history_resumed_does_not_seed_reference_context_item_after_compaction(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().turn_context("t1").compacted("summary", [])

    result = replay(rollout)

    assert (result.previous_turn_settings, result.reference_context) == (None, None)


def test_reconstruct_history_restores_initial_window_from_session_meta(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().session_meta(context_window={"window_id": new_rollout.WINDOW_1})
    rollout.completed_user_turn("t1", "hi")

    result = replay(rollout)

    assert result.window == WindowInfo(0, new_rollout.WINDOW_1, None, new_rollout.WINDOW_1)


def test_reconstruct_history_prefers_compacted_window_over_session_meta(
    new_rollout: Builder, replay: Any
) -> None:
    window_1, window_2, window_3 = (
        new_rollout.WINDOW_1,
        new_rollout.WINDOW_2,
        new_rollout.WINDOW_3,
    )
    rollout = new_rollout().session_meta(context_window={"window_id": window_1})
    rollout.completed_user_turn("t1", "hi", complete=False)
    rollout.compacted(
        "",
        [new_rollout.user_item("hi")],
        window_number=2,
        first_window_id=window_1,
        previous_window_id=window_2,
        window_id=window_3,
    )
    rollout.turn_complete("t1")

    result = replay(rollout)

    assert result.window == WindowInfo(2, window_1, window_2, window_3)


def test_reconstruct_history_replays_world_state_from_latest_compaction_window(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "hi", complete=False)
    rollout.world_state({"environment": {"status": "old"}})
    rollout.compacted("", [new_rollout.user_item("hi")], window_number=1)
    rollout.world_state({"environment": {"status": "starting", "cwd": "/workspace"}})
    rollout.world_state({"environment": {"status": "ready"}}, full=False)
    rollout.turn_complete("t1")

    result = replay(rollout)

    assert result.world_state == {"environment": {"status": "ready", "cwd": "/workspace"}}


def test_reconstruct_history_preserves_legacy_compaction_count_with_session_meta_window(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().session_meta(context_window={"window_id": new_rollout.WINDOW_1})
    rollout.completed_user_turn("t1", "hi").compacted("legacy summary")

    result = replay(rollout)

    assert result.window == WindowInfo(1, None, None, None)


def test_record_initial_history_resumed_legacy_compaction_without_replacement_history_does_not_inject_current_initial_context(  # noqa: E501
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().user("before compact").assistant("reply").compacted("legacy summary")

    result = replay(rollout)

    assert result.history == (user_message("before compact"), user_message("legacy summary"))
    assert result.reference_context is None


def test_record_initial_history_resumed_legacy_compaction_without_replacement_history_clears_later_reference_context_item(  # noqa: E501
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().user("before compact").compacted("legacy summary")
    rollout.completed_user_turn("t2", "after", model="model-b")

    result = replay(rollout)

    assert result.reference_context is None
    assert result.previous_turn_settings == settings("model-b")
    assert result.history == (
        user_message("before compact"),
        user_message("legacy summary"),
        user_message("after"),
    )


def test_record_initial_history_resumed_turn_context_after_compaction_reestablishes_reference_context_item(  # noqa: E501
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().turn_started("t1").user_message_event("hi").user("hi")
    rollout.compacted("", [new_rollout.user_item("hi")], window_number=1)
    rollout.turn_context("t1", "model-b").turn_complete("t1")

    result = replay(rollout)

    assert result.previous_turn_settings == settings("model-b")
    assert result.reference_context == ctx("t1", "model-b")


def test_record_initial_history_resumed_aborted_turn_without_id_clears_active_turn_for_compaction_accounting(  # noqa: E501
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "user 1")
    rollout.turn_started("t2").user_message_event("user 2").user("user 2").turn_aborted(None)
    rollout.compacted("", [new_rollout.user_item("user 2")], window_number=1)

    result = replay(rollout)

    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context is None


def test_record_initial_history_resumed_unmatched_abort_preserves_active_turn_for_later_turn_context(  # noqa: E501
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "user 1")
    rollout.turn_started("t2").user_message_event("user 2").user("user 2")
    rollout.turn_aborted("some-other-turn").turn_context("t2", "model-b").turn_complete("t2")

    result = replay(rollout)

    assert result.previous_turn_settings == settings("model-b")
    assert result.reference_context == ctx("t2", "model-b")


def test_record_initial_history_resumed_trailing_incomplete_turn_compaction_clears_reference_context_item(  # noqa: E501
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "user 1")
    rollout.turn_started("t2").user_message_event("user 2").user("user 2")
    rollout.compacted("", [new_rollout.user_item("user 2")], window_number=1)

    result = replay(rollout)

    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context is None
    assert result.history == (user_message("user 2"),)


def test_record_initial_history_resumed_trailing_incomplete_turn_preserves_turn_context_item(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().turn_started("t1").user_message_event("hi").turn_context("t1")

    result = replay(rollout)

    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context == ctx("t1")


def test_record_initial_history_resumed_replaced_incomplete_compacted_turn_clears_reference_context_item(  # noqa: E501
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "user 1")
    rollout.turn_started("t2").user_message_event("user 2").user("user 2")
    rollout.compacted("", [new_rollout.user_item("user 2")], window_number=1)
    rollout.turn_started("t3")

    result = replay(rollout)

    assert result.previous_turn_settings == settings("model-a")
    assert result.reference_context is None


@pytest.mark.parametrize("variant", ["bare_turn_context", "patch_only", "full_before_compaction"])
def test_record_initial_history_requires_surviving_full_snapshot_without_user_turn(
    new_rollout: Builder, replay: Any, variant: str
) -> None:
    rollout = new_rollout()
    if variant == "bare_turn_context":
        rollout.turn_context("t0")
    elif variant == "patch_only":
        rollout.world_state({"test": {"value": 1}}, full=False)
    else:
        rollout.world_state({"test": {"value": 1}}).compacted("", [])
    rollout.turn_context("t1")

    result = replay(rollout)

    assert result.reference_context is None
    assert result.world_state is None
    assert (PATCH_WITHOUT_BASELINE in result.warnings) == (variant == "patch_only")


def _counting(lines: list[RolloutLine], consumed: list[int]) -> Iterator[RolloutLine]:
    for line in reversed(lines):
        consumed[0] += 1
        yield line


def test_bounded_replay_matches_full_replay_after_empty_turn_compactions(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().session_meta()
    rollout.completed_user_turn("t0", "start", items=[new_rollout.assistant_item("ok")])
    for number in range(1, 4):
        turn = f"t{number}"
        rollout.turn_started(turn)
        rollout.compacted("", [new_rollout.user_item(f"summary {number}")], window_number=number)
        rollout.world_state({"env": {"round": number}}).turn_context(turn).turn_complete(turn)
    rollout.completed_user_turn("t9", "again", model="model-b")
    rollout.world_state({"env": {"round": 9}}, full=False)
    lines = rollout.typed()
    consumed = [0]

    bounded = reconstruct_from_newest(_counting(lines, consumed))

    assert _key(bounded) == _key(replay(rollout))
    assert bounded.world_state == {"env": {"round": 9}}
    assert bounded.history == (user_message("summary 3"), user_message("again"))
    assert bounded.window == WindowInfo(3)
    # The newest user turn, then the newest compacted turn back to its task_started.
    assert consumed[0] == 6 + 5


# --- checkpoints (our extension) ----------------------------------------------------------------


def _checkpoint_line(result: Reconstructed) -> dict[str, Any]:
    payload = checkpoint_payload(
        result.history, result.reference_context, result.previous_turn_settings, result.window
    )
    return payload.to_json()


def test_resume_stops_at_the_newest_checkpoint_and_matches_the_replay_without_it(
    new_rollout: Builder, replay: Any
) -> None:
    before = new_rollout().session_meta(context_window={"window_id": new_rollout.WINDOW_1})
    before.completed_user_turn("t1", "one", items=[new_rollout.assistant_item("a1")])
    before.world_state({"env": {"cwd": "/a"}})
    before.completed_user_turn("t2", "two", model="model-b")
    before.world_state({"env": {"cwd": "/b"}}, full=False)
    plain = reconstruct(before.typed())
    with_checkpoint = before.copy()
    with_checkpoint.line("compacted", _checkpoint_line(plain)).world_state(plain.world_state)
    after = [new_rollout.assistant_item("a3")]
    for rollout in (before, with_checkpoint):
        rollout.completed_user_turn("t3", "three", model="model-b", items=after)
    lines = with_checkpoint.typed()
    consumed = [0]

    bounded = reconstruct_from_newest(_counting(lines, consumed))

    assert _key(bounded) == _key(replay(before)) == _key(replay(with_checkpoint))
    assert consumed[0] == 6 + 2  # the last turn, the world-state line, the checkpoint
    assert bounded.window == WindowInfo(0, new_rollout.WINDOW_1, None, new_rollout.WINDOW_1)
    assert bounded.reference_context == ctx("t3", "model-b")


def test_checkpoint_restores_reference_and_settings_from_its_payload(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "one", model="model-a")
    payload = checkpoint_payload(
        [parse_response_item(new_rollout.user_item("one"))],
        ctx("t1", "model-a"),
        settings("model-a", "hash-a", False),
        WindowInfo(4, new_rollout.WINDOW_1, new_rollout.WINDOW_2, new_rollout.WINDOW_3),
    )
    rollout.line("compacted", payload.to_json()).world_state({"env": {}})
    rollout.turn_started("t2").turn_complete("t2")

    result = replay(rollout)

    assert result.reference_context == ctx("t1", "model-a")
    assert result.previous_turn_settings == settings("model-a", "hash-a", False)
    assert result.window == WindowInfo(
        4, new_rollout.WINDOW_1, new_rollout.WINDOW_2, new_rollout.WINDOW_3
    )
    assert result.world_state == {"env": {}}
    assert result.history == (user_message("one"),)


def test_checkpoint_inside_a_rolled_back_turn_is_not_used(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "one", items=[])
    rollout.turn_started("t2").user_message_event("two").user("two").turn_context("t2", "model-b")
    bogus = checkpoint_payload(
        [parse_response_item(new_rollout.user_item("bogus"))], None, None, WindowInfo(7)
    )
    rollout.line("compacted", bogus.to_json()).turn_complete("t2").rolled_back(1)

    result = replay(rollout)

    assert result.history == (user_message("one"),)
    assert result.window == WindowInfo(0)
    assert result.previous_turn_settings == settings("model-a")


def test_malformed_checkpoint_metadata_is_replayed_past_with_a_warning(
    new_rollout: Builder, replay: Any
) -> None:
    rollout = new_rollout().completed_user_turn("t1", "one", items=[])
    rollout.compacted("", [new_rollout.user_item("one")], mini_codex_checkpoint={"window": "nope"})

    result = replay(rollout)

    assert result.history == (user_message("one"),)
    assert result.reference_context == ctx("t1")
    assert result.window == WindowInfo(0)
    assert MALFORMED_CHECKPOINT in result.warnings


def test_reconstructed_to_json_is_the_replay_json_shape(new_rollout: Builder) -> None:
    rollout = new_rollout().session_meta(context_window={"window_id": new_rollout.WINDOW_1})
    rollout.completed_user_turn(
        "t1", "hi", model="model-b", items=[new_rollout.assistant_item("yo")]
    )
    rollout.world_state({"env": {"cwd": "/repo"}}, full=False)

    result = reconstruct(rollout.typed())

    assert result.to_json() == {
        "world_state": None,
        "history": [new_rollout.user_item("hi"), new_rollout.assistant_item("yo")],
        "reference_context": new_rollout.turn_context_payload("t1", "model-b"),
        "previous_model": "model-b",
        "window": {
            "number": 0,
            "first_id": new_rollout.WINDOW_1,
            "previous_id": None,
            "current_id": new_rollout.WINDOW_1,
        },
        "warnings": [PATCH_WITHOUT_BASELINE],
        "stats": {"lines": 8, "bad_lines": 0, "unknown_items": 0},
    }
