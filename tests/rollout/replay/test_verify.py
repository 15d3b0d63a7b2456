"""verify_rollout: invariants I1, I3, I5, I6 on hand-built files and on the Codex corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_codex.protocol import (
    CompactedItem,
    CompactedLine,
    EventMsgLine,
    FunctionCall,
    FunctionCallOutput,
    ResponseItemLine,
    RolloutLine,
    SessionMeta,
    SessionMetaLine,
    TaskComplete,
    TaskStarted,
    ThreadRolledBack,
    TurnContextItem,
    TurnContextLine,
    UnknownLine,
    UserMessageEvent,
    WorldStateItem,
    WorldStateLine,
    assistant_message,
    developer_message,
    user_message,
)
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay import reconstruct
from mini_codex.rollout.replay.verify import VerifyResult, Violation, check_rollout, verify_rollout

# --- a tiny file-building vocabulary --------------------------------------------------------------


def meta() -> RolloutLine:
    return SessionMetaLine(payload=SessionMeta(id="019b6b08-58f3-7580-9dca-fe3f30a10650"))


def started(turn: str = "t") -> RolloutLine:
    return EventMsgLine(payload=TaskStarted(turn_id=turn))


def complete(turn: str = "t") -> RolloutLine:
    return EventMsgLine(payload=TaskComplete(turn_id=turn))


def user(text: str) -> list[RolloutLine]:
    return [
        ResponseItemLine(payload=user_message(text)),
        EventMsgLine(payload=UserMessageEvent(message=text)),
    ]


def dev(text: str = "<permissions>") -> RolloutLine:
    return ResponseItemLine(payload=developer_message(text))


def env_context() -> RolloutLine:
    return ResponseItemLine(payload=user_message("<environment_context>cwd</environment_context>"))


def answer(text: str = "ok") -> RolloutLine:
    return ResponseItemLine(payload=assistant_message(text))


def call(call_id: str = "c") -> list[RolloutLine]:
    return [
        ResponseItemLine(payload=FunctionCall(name="shell", arguments="{}", call_id=call_id)),
        ResponseItemLine(payload=FunctionCallOutput(call_id=call_id, output="done")),
    ]


def full(**state: Any) -> RolloutLine:
    return WorldStateLine(payload=WorldStateItem(full=True, state=state))


def patch(**state: Any) -> RolloutLine:
    return WorldStateLine(payload=WorldStateItem(full=False, state=state))


def tc(turn: str = "t") -> RolloutLine:
    return TurnContextLine(payload=TurnContextItem(turn_id=turn, model="m"))


def compacted(*history: str) -> RolloutLine:
    items = [user_message(text) for text in history]
    return CompactedLine(payload=CompactedItem(message="", replacement_history=items))


def rollback(turns: int) -> RolloutLine:
    return EventMsgLine(payload=ThreadRolledBack(num_turns=turns))


def first_turn(state: dict[str, Any]) -> list[RolloutLine]:
    """A fresh session's first turn, in Codex's order."""
    return [
        meta(),
        started("t1"),
        dev(),
        env_context(),
        WorldStateLine(payload=WorldStateItem(full=True, state=state)),
        tc("t1"),
        *user("hi"),
        *call("c1"),
        dev("<environment_context>changed</environment_context>"),
        patch(env={"cwd": "/b"}),
        answer(),
        complete("t1"),
    ]


def at(lines: list[RolloutLine], line: RolloutLine) -> int:
    """1-based line number of ``line`` (by identity)."""
    return next(index for index, candidate in enumerate(lines, 1) if candidate is line)


# --- valid files ----------------------------------------------------------------------------------


def test_codex_shaped_session_with_steps_and_second_turn_is_valid() -> None:
    lines = [
        *first_turn({"env": {"cwd": "/a"}, "model": "m"}),
        started("t2"),
        dev("<model_switch>"),
        patch(model="n"),
        tc("t2"),
        *user("again"),
        patch(env={"cwd": "/c"}),  # the first step's own patch after the turn start is legal
        answer(),
        complete("t2"),
    ]
    assert check_rollout(lines) == VerifyResult(
        violations=[], baseline={"env": {"cwd": "/c"}, "model": "n"}
    )


def test_mid_turn_compaction_and_checkpoint_are_valid() -> None:
    lines = [
        *first_turn({"env": {"cwd": "/a"}}),
        started("t2"),
        *user("more"),
        compacted("hi", "more"),
        full(env={"cwd": "/b"}),
        tc("t2"),
        answer(),
        compacted("hi", "more", "ok"),  # a mini-codex checkpoint: no turn_context after it
        full(env={"cwd": "/b"}),
        patch(env={"cwd": "/d"}),
        complete("t2"),
    ]
    assert check_rollout(lines) == VerifyResult(violations=[], baseline={"env": {"cwd": "/d"}})


def test_compaction_without_reinjection_then_full_next_turn_is_valid() -> None:
    lines = [
        *first_turn({"a": 1}),
        compacted("hi"),
        started("t2"),
        dev(),
        full(a=2),
        tc("t2"),
        *user("x"),
        answer(),
        complete("t2"),
    ]
    assert verify_rollout(lines) == []


def test_unknown_lines_are_transparent() -> None:
    lines = first_turn({"a": 1})
    lines.insert(5, UnknownLine(type="token_usage_record", payload={}))
    assert verify_rollout(lines) == []


# --- I3 -------------------------------------------------------------------------------------------


def test_patch_without_baseline_at_start_is_i3() -> None:
    lines = [meta(), started(), dev(), bad := patch(a=1), tc(), *user("x")]
    assert verify_rollout(lines) == [
        Violation(
            at(lines, bad),
            "I3",
            "world_state patch without a baseline (no full snapshot since the start of the file)",
        )
    ]


def test_patch_after_compaction_without_full_is_i3() -> None:
    lines = [*first_turn({"a": 1}), started("t2"), comp := compacted("hi"), bad := patch(a=2)]
    assert verify_rollout(lines) == [
        Violation(
            at(lines, bad),
            "I3",
            "world_state patch without a baseline (no full snapshot since the compaction at "
            f"line {at(lines, comp)})",
        )
    ]


def test_result_uses_given_line_numbers() -> None:
    lines = [meta(), patch(a=1)]
    assert [v.line_number for v in verify_rollout(lines, line_numbers=[1, 7])] == [7]
    with pytest.raises(ValueError, match="one entry per line"):
        verify_rollout(lines, line_numbers=[1])


# --- I5 -------------------------------------------------------------------------------------------


def test_full_item_while_baseline_exists_is_i5() -> None:
    lines = [*first_turn({"a": 1}), started("t2"), dev(), bad := full(a=2), tc("t2")]
    [violation] = verify_rollout(lines)
    assert (violation.line_number, violation.invariant) == (at(lines, bad), "I5")
    assert "a step wrote a full item" in violation.message


def test_turn_context_before_reinjected_world_state_after_compaction_is_i5() -> None:
    lines = [*first_turn({"a": 1}), started("t2"), comp := compacted("hi"), ctx := tc("t2")]
    lines.append(bad := full(a=1))
    assert verify_rollout(lines) == [
        Violation(
            at(lines, bad),
            "I5",
            f"turn_context (line {at(lines, ctx)}) written before the full world_state "
            f"re-injected after the compaction at line {at(lines, comp)}",
        )
    ]


# --- I1 -------------------------------------------------------------------------------------------


def test_context_items_after_their_world_state_is_i1() -> None:
    lines = [meta(), started(), ws := full(a=1), bad := dev(), env_context(), ctx := tc()]
    assert verify_rollout(lines) == [
        Violation(
            at(lines, bad),
            "I1",
            f"context item recorded after the world_state at line {at(lines, ws)} that describes "
            f"it (turn_context at line {at(lines, ctx)}); items must come first",
        )
    ]


def test_full_world_state_after_turn_context_is_i1() -> None:
    lines = [meta(), started(), dev(), ctx := tc(), bad := full(a=1), *user("x")]
    assert verify_rollout(lines) == [
        Violation(
            at(lines, bad),
            "I1",
            f"full world_state after the turn_context at line {at(lines, ctx)} of the same "
            "context update: turn_context must come last",
        )
    ]


def test_model_output_between_separates_updates() -> None:
    # A legal session: world_state, then the user prompt and a model answer, then (no event in
    # between, as in files without task events) the next turn's context update.
    lines = [meta(), dev(), full(a=1), tc(), *user("x")[:1], answer(), dev(), patch(a=2), tc()]
    assert verify_rollout(lines) == []


# --- I6 and rollbacks -----------------------------------------------------------------------------


def test_rolled_back_turn_patches_never_apply() -> None:
    lines = [
        *first_turn({"a": 1, "b": 1}),
        started("t2"),
        *user("to be undone"),
        patch(b=2),
        answer(),
        complete("t2"),
        rollback(1),
        started("t3"),
        *user("instead"),
        patch(a=3),
        answer(),
        complete("t3"),
    ]
    assert check_rollout(lines) == VerifyResult(
        violations=[], baseline={"a": 3, "b": 1, "env": {"cwd": "/b"}}
    )


def test_rollback_of_the_only_turn_clears_the_baseline_and_allows_a_full_item() -> None:
    lines = [*first_turn({"a": 1}), rollback(1), started("t2"), dev(), full(a=9), tc("t2")]
    assert check_rollout(lines) == VerifyResult(violations=[], baseline={"a": 9})
    lines = [*first_turn({"a": 1}), rollback(1), started("t2"), bad := patch(a=2)]
    assert verify_rollout(lines) == [
        Violation(
            at(lines, bad),
            "I3",
            "world_state patch without a baseline (no full snapshot since the rollback at "
            f"line {at(lines, bad) - 2})",
        )
    ]


def test_non_user_segment_does_not_use_up_the_rollback_count() -> None:
    lines = [
        *first_turn({"a": 1}),
        started("t2"),
        *user("second"),
        patch(a=2),
        complete("t2"),
        started("task"),  # a standalone task turn: no user input
        patch(a=3),
        complete("task"),
        rollback(1),
    ]
    assert check_rollout(lines).baseline == {"a": 1, "env": {"cwd": "/b"}}


def test_world_state_after_rollback_marker_in_discarded_turn_is_i6() -> None:
    lines = [*first_turn({"a": 1}), rollback(1), bad := patch(a=2)]
    assert verify_rollout(lines) == [
        Violation(
            at(lines, bad),
            "I6",
            "world_state written after a rollback marker in the turn that marker discards: "
            "replay never applies it",
        )
    ]


# --- the Codex corpus -----------------------------------------------------------------------------

CODEX_CORPUS = Path(__file__).parents[2] / "fixtures" / "rollouts" / "codex"


@pytest.mark.parametrize("path", sorted(CODEX_CORPUS.glob("*.jsonl")), ids=lambda path: path.name)
def test_codex_corpus_file_verifies_and_agrees_with_replay(path: Path) -> None:
    rollout = read_rollout(path)
    checked = check_rollout(rollout.lines)
    assert checked == VerifyResult(violations=[], baseline=reconstruct(rollout.lines).world_state)


def test_codex_corpus_is_present() -> None:
    assert len(list(CODEX_CORPUS.glob("*.jsonl"))) >= 8
