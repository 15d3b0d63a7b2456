"""Compatibility with rollouts written by the real Codex CLI (tests/fixtures/rollouts/codex/).

The files are byte-for-byte copies of shared/codex-rollouts/ (provenance in the folder's README).
None of them holds a compaction or a rollback, so the expected history of each is every
``response_item`` line in file order minus the legacy ``ghost_snapshot`` items; the expectations
below are derived from the files themselves (line counts, the last ``response_item`` and
``turn_context`` lines), not from replay output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import orjson
import pytest

from mini_codex.context import normalize_history
from mini_codex.jsonmerge import apply_merge_patch
from mini_codex.protocol import FunctionCall, FunctionCallOutput, TurnContextItem
from mini_codex.rollout import (
    ReadStats,
    WindowInfo,
    decode_line,
    load_resume_state,
    read_rollout,
    reconstruct,
    replay_file,
)

CODEX = Path(__file__).parent.parent / "fixtures" / "rollouts" / "codex"


class Expected(NamedTuple):
    lines: int
    unknown_items: int
    """``token_usage_record`` lines."""
    history: int
    """``response_item`` lines minus ``ghost_snapshot`` items."""
    model: str
    """The model of the last ``turn_context``."""


EXPECTED = {
    "codex-0.47.0-2025-10-gpt5-codex-pomodoro-apply-patch.jsonl": Expected(
        153, 0, 63, "gpt-5-codex"
    ),
    "codex-0.77.0-2025-12-shell-command-apply-patch-ghost-snapshot.jsonl": Expected(
        76, 0, 32 - 3, "gpt-5.2-codex"
    ),
    "codex-desktop-0.104.0-alpha-2026-02-redacted-unterminated-turn.jsonl": Expected(
        19, 0, 11, "gpt-5.3-codex"
    ),
    "codex-desktop-0.155.0-alpha-2026-09-world-state-token-usage-record.jsonl": Expected(
        45, 3, 16, "gpt-6-astra"
    ),
    "codex-exec-0.135.0-2026-06-redacted-single-turn.jsonl": Expected(11, 0, 4, "gpt-5.5"),
    "codex-exec-0.158.0-2026-09-code-mode-exec-input-image-reserialized.jsonl": Expected(
        16, 0, 9, "gpt-5.6-luna"
    ),
    "codex-exec-0.169.0-2026-11-local-fake-server-exec-command-20-steps.jsonl": Expected(
        114, 21, 44, "gpt-5-codex"
    ),
    "codex-tui-0.155.1-2026-09-subagent-thread-filtered.jsonl": Expected(6, 0, 2, "gpt-5.6-terra"),
}


def raw_lines(name: str) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in (CODEX / name).read_bytes().splitlines() if raw.strip()]


def test_every_corpus_file_has_an_expectation() -> None:
    assert sorted(path.name for path in CODEX.glob("*.jsonl")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_codex_rollout_parses_without_bad_lines(name: str) -> None:
    read = read_rollout(CODEX / name)

    assert read.stats == ReadStats(EXPECTED[name].lines, 0, EXPECTED[name].unknown_items)
    assert read.warnings == ()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_codex_rollout_lines_round_trip_to_equal_json(name: str) -> None:
    for original in raw_lines(name):
        line = decode_line(original)
        payload = original.get("payload")
        if original["type"] == "response_item" and payload["type"] == "ghost_snapshot":
            assert line is None
        else:
            assert line is not None
            assert line.to_json() == original


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_codex_rollout_reconstructs_expected_history_and_settings(name: str) -> None:
    expected = EXPECTED[name]
    originals = raw_lines(name)
    last_item = [line["payload"] for line in originals if line["type"] == "response_item"][-1]
    last_context = [line["payload"] for line in originals if line["type"] == "turn_context"][-1]
    read = read_rollout(CODEX / name)

    result = reconstruct(read.lines, read.stats)

    assert len(result.history) == expected.history
    assert result.history[-1].to_json() == last_item
    assert result.reference_context == TurnContextItem.model_validate(last_context)
    assert result.previous_turn_settings is not None
    assert result.previous_turn_settings.model == expected.model
    assert result.warnings == ()
    for fast in (replay_file(CODEX / name), load_resume_state(CODEX / name)):
        assert fast.history == result.history
        assert fast.world_state == result.world_state
        assert fast.reference_context == result.reference_context
        assert fast.previous_turn_settings == result.previous_turn_settings
        assert fast.window == result.window
        assert fast.session_meta == read.session_meta


def _world_state_lines(name: str) -> list[dict[str, Any]]:
    return [line["payload"] for line in raw_lines(name) if line["type"] == "world_state"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_codex_rollout_world_state_baseline(name: str) -> None:
    states = _world_state_lines(name)
    if not states:
        expected = None
    else:
        # The corpus holds one full snapshot, optionally followed by one patch, in surviving turns.
        assert states[0]["full"] is True
        expected = states[0]["state"]
        for patch in states[1:]:
            expected = apply_merge_patch(expected, patch["state"])

    assert load_resume_state(CODEX / name).world_state == expected


def test_codex_world_state_patch_is_applied_to_the_full_snapshot() -> None:
    name = "codex-desktop-0.155.0-alpha-2026-09-world-state-token-usage-record.jsonl"

    assert [state["full"] for state in _world_state_lines(name)] == [True, False]
    assert load_resume_state(CODEX / name).world_state is not None


def test_codex_window_comes_from_session_meta_when_it_is_a_uuid_v7() -> None:
    window_id = "01a228ca-5f9f-7071-9dd6-a78d17ed3a5d"
    name = "codex-exec-0.169.0-2026-11-local-fake-server-exec-command-20-steps.jsonl"
    redacted = "codex-desktop-0.155.0-alpha-2026-09-world-state-token-usage-record.jsonl"

    assert load_resume_state(CODEX / name).window == WindowInfo(0, window_id, None, window_id)
    assert load_resume_state(CODEX / redacted).window == WindowInfo(0)  # "[redacted]" id


def test_subagent_thread_identity_is_its_session_id() -> None:
    read = read_rollout(CODEX / "codex-tui-0.155.1-2026-09-subagent-thread-filtered.jsonl")

    assert read.session_meta is not None
    assert read.session_meta.id == "01a0c43e-367f-7833-91d9-4d9283a3fbd5"
    assert read.thread_id == "01a0c43c-3897-7f60-908d-ade8c551c609"


def test_resumed_history_ending_in_an_orphan_call_is_repaired_for_the_next_prompt() -> None:
    path = CODEX / "codex-desktop-0.104.0-alpha-2026-02-redacted-unterminated-turn.jsonl"

    history = load_resume_state(path).history
    prompt = normalize_history(history)

    assert isinstance(history[-1], FunctionCall)
    assert history[-1].call_id == "call_UtYwHmwWekzvq83m8Rb9K8jJ"
    assert prompt == [
        *history,
        FunctionCallOutput(call_id="call_UtYwHmwWekzvq83m8Rb9K8jJ", output="aborted"),
    ]
