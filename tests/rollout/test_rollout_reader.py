"""The rollout reader: tolerance (spec §5.4), clear errors, reverse streaming, zstd, legacy files,
and what each file of the golden corpus (tests/fixtures/rollouts) reconstructs to."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, get_args

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.errors import RolloutError, RolloutSchemaError
from mini_codex.protocol import (
    CompactedLine,
    EventMsg,
    FunctionCall,
    Message,
    OutputText,
    Reasoning,
    ResponseItemLine,
    SessionMetaLine,
    TurnContextItem,
    UnknownEvent,
    UnknownLine,
    assistant_message,
    user_message,
)
from mini_codex.rollout import (
    PATCH_WITHOUT_BASELINE,
    PreviousTurnSettings,
    ReadStats,
    Reconstructed,
    WindowInfo,
    decode_line,
    iter_lines_reverse,
    iter_raw_lines_reverse,
    load_resume_state,
    read_rollout,
    reconstruct,
    replay_file,
)
from mini_codex.rollout.replay.classify import EVENT_MODELS, classify

CORPUS = Path(__file__).parent.parent / "fixtures" / "rollouts"
W1 = "01900000-0000-7000-8000-00000000000a"
W2 = "01900000-0000-7000-8000-00000000000b"
ENV = "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"


def golden(name: str) -> Path:
    return CORPUS / name


def replay_golden(name: str) -> Reconstructed:
    """Replay a golden file through the typed path and the fast path; they must agree."""
    path = golden(name)
    read = read_rollout(path)
    typed = reconstruct(read.lines, read.stats)
    for fast in (replay_file(path), load_resume_state(path)):
        assert (fast.history, fast.world_state, fast.reference_context) == (
            typed.history,
            typed.world_state,
            typed.reference_context,
        )
        assert (fast.previous_turn_settings, fast.window) == (
            typed.previous_turn_settings,
            typed.window,
        )
    assert replay_file(path).stats == read.stats
    return typed


def context(turn_id: str, model: str = "gpt-test") -> TurnContextItem:
    return TurnContextItem.model_validate(
        {
            "turn_id": turn_id,
            "cwd": "/repo",
            "current_date": "2026-09-01",
            "timezone": "UTC",
            "approval_policy": "on-request",
            "sandbox_policy": {
                "type": "workspace-write",
                "writable_roots": ["/repo"],
                "network_access": False,
            },
            "model": model,
            "summary": "auto",
        }
    )


# --- golden corpus: minimal/ and features/ --------------------------------------------------------


def test_minimal_single_turn_reconstructs_history_world_state_and_window() -> None:
    result = replay_golden("minimal/single_turn.jsonl")

    assert result.history == (user_message(ENV), user_message("say hi"), assistant_message("hi"))
    assert result.world_state == {
        "environments": {"environments": {"local": {"cwd": "/repo", "status": "available"}}},
        "agents_md": {"text": "be brief", "directory": "/repo"},
    }
    assert result.reference_context == context("turn-1")
    assert result.previous_turn_settings == PreviousTurnSettings("gpt-test", None, None)
    assert result.window == WindowInfo(0, W1, None, W1)
    assert result.stats == ReadStats(lines=9)
    assert result.warnings == ()


def test_minimal_single_turn_identity_and_schema() -> None:
    read = read_rollout(golden("minimal/single_turn.jsonl"))

    assert read.session_meta is not None
    assert read.session_meta.mini_codex_schema == 1
    assert read.thread_id == "01900000-0000-7000-8000-0000000000f1"


def test_world_state_patches_apply_in_order_including_removals() -> None:
    result = replay_golden("features/world_state_patches.jsonl")

    assert result.world_state == {"model": "gpt-other", "workspace": {"files": {"b.py": 1}}}
    assert result.previous_turn_settings == PreviousTurnSettings("gpt-other", None, None)


def test_rollback_drops_the_aborted_and_the_completed_turn_with_their_records() -> None:
    result = replay_golden("features/rollback.jsonl")

    assert result.history == (
        user_message("first"),
        assistant_message("one"),
        user_message("fourth"),
        assistant_message("four"),
    )
    assert result.world_state == {"test": {"environment": "first"}}
    assert result.reference_context == context("turn-4")


def test_mid_turn_compaction_bases_history_world_state_and_window() -> None:
    result = replay_golden("features/compaction_window.jsonl")

    assert result.history == (
        user_message("long task"),
        user_message("summary: working on it"),
        assistant_message("finished"),
    )
    assert result.world_state == {"env": {"cwd": "/repo", "status": "ready"}}
    assert result.window == WindowInfo(1, W1, W1, W2)
    assert result.reference_context == context("turn-1")


def test_legacy_compaction_rebuilds_history_and_clears_the_reference() -> None:
    result = replay_golden("features/legacy_compaction.jsonl")

    assert result.history == (
        user_message("before compact"),
        user_message("legacy summary"),
        user_message("after compact"),
        assistant_message("reply 2"),
    )
    assert result.reference_context is None
    assert result.previous_turn_settings == PreviousTurnSettings("gpt-test", None, None)
    assert result.window == WindowInfo(1)


def test_checkpoint_is_a_history_base_but_not_a_new_window() -> None:
    result = replay_golden("features/checkpoint.jsonl")

    assert result.history == (
        user_message("one"),
        assistant_message("a1"),
        user_message("two"),
        assistant_message("a2"),
    )
    assert result.world_state == {"env": {"cwd": "/repo/sub"}}
    assert result.window == WindowInfo(0, W1, None, W1)
    assert result.reference_context == context("turn-2")


def test_codex_only_kinds_are_counted_and_inter_agent_messages_enter_history() -> None:
    result = replay_golden("features/inter_agent_and_unknown_kinds.jsonl")
    communication = (
        '{"author":"/root","recipient":"/root/worker","other_recipients":[],'
        '"content":"check the tests","trigger_turn":true}'
    )

    assert result.history == (
        Message(role="assistant", content=[OutputText(text=communication)], phase="commentary"),
        assistant_message("tests pass"),
    )
    assert result.stats == ReadStats(lines=11, bad_lines=0, unknown_items=4)
    assert result.previous_turn_settings == PreviousTurnSettings("gpt-test", None, None)


def test_ghost_snapshots_are_dropped_also_inside_replacement_history() -> None:
    read = read_rollout(golden("features/ghost_snapshot.jsonl"))
    compacted = [line for line in read.lines if isinstance(line, CompactedLine)]

    result = replay_golden("features/ghost_snapshot.jsonl")

    assert result.history == (user_message("edit"), assistant_message("edited"))
    assert len(read.lines) == 8  # 10 lines, 2 ghost snapshot items dropped
    assert read.stats == ReadStats(lines=10)
    assert compacted[0].payload.to_json()["replacement_history_metadata"] == [None, None]


def test_legacy_pre_envelope_file_is_converted() -> None:
    path = golden("features/legacy_pre_envelope.jsonl")
    objects = [orjson.loads(raw) for raw in path.read_bytes().splitlines()]
    bare_items = [obj for obj in objects if "type" in obj]

    read = read_rollout(path)
    result = replay_golden("features/legacy_pre_envelope.jsonl")

    assert read.stats == ReadStats(lines=10)
    assert isinstance(read.lines[0], SessionMetaLine)
    assert read.lines[0].payload.to_json() == objects[0]
    assert read.thread_id == "4d26a132-34a6-4eb8-a1f4-6ef44c0b4a4c"
    assert [item.to_json() for item in result.history] == bare_items
    assert [type(item) for item in result.history][:3] == [Message, Reasoning, FunctionCall]
    assert result.previous_turn_settings is None


# --- golden corpus: negative/ ---------------------------------------------------------------------


@pytest.mark.parametrize("load", [read_rollout, load_resume_state, replay_file])
def test_newer_schema_is_refused_with_a_clear_message(load: Any) -> None:
    path = golden("negative/future_version.jsonl")

    with pytest.raises(RolloutSchemaError) as raised:
        load(path)

    assert str(raised.value) == (
        f"{path} was written with rollout schema 99, but this mini-codex reads schemas up to 1; "
        "upgrade mini-codex to read it"
    )


def test_torn_last_line_is_a_bad_line_not_an_error() -> None:
    result = replay_golden("negative/truncated_line.jsonl")

    assert result.stats == ReadStats(lines=8, bad_lines=1)
    assert result.history == (user_message("hi"), assistant_message("hello"))
    assert load_resume_state(golden("negative/truncated_line.jsonl")).warnings == (
        "1 line(s) could not be decoded and were skipped",
    )


def test_non_object_world_state_lines_are_skipped_and_do_not_reset_the_baseline() -> None:
    result = replay_golden("negative/null_snapshot.jsonl")

    assert result.stats == ReadStats(lines=10, bad_lines=2)
    assert result.world_state == {"env": {"status": "b"}}


def test_undecodable_lines_are_counted_and_reported_by_line_number() -> None:
    read = read_rollout(golden("negative/bad_lines.jsonl"))

    result = replay_golden("negative/bad_lines.jsonl")

    assert read.stats == ReadStats(lines=13, bad_lines=6, unknown_items=1)
    assert read.warnings == (
        "line 4: not valid JSON, skipped",
        "line 5: does not decode as a rollout line, skipped",
        "line 6: does not decode as a rollout line, skipped",
        "line 7: does not decode as a rollout line, skipped",
        "line 8: does not decode as a rollout line, skipped",
        "line 9: does not decode as a rollout line, skipped",
    )
    assert result.history == (user_message("hi"), assistant_message("hello"))
    assert isinstance(read.lines[3], UnknownLine)


def test_patch_without_a_full_snapshot_is_skipped_with_the_spec_warning() -> None:
    result = replay_golden("negative/patch_without_full.jsonl")

    assert result.world_state is None
    assert result.warnings == (PATCH_WITHOUT_BASELINE,)


@pytest.mark.parametrize("name", ["negative/empty.jsonl", "negative/blank_lines.jsonl"])
@pytest.mark.parametrize("load", [read_rollout, load_resume_state, replay_file])
def test_empty_session_file_is_an_error(name: str, load: Any) -> None:
    path = golden(name)

    with pytest.raises(RolloutError, match=r"^empty session file: ") as raised:
        load(path)

    assert str(raised.value) == f"empty session file: {path}"


# --- paths and errors -----------------------------------------------------------------------------


@pytest.mark.parametrize("load", [read_rollout, load_resume_state, replay_file])
def test_missing_path_is_a_clear_error(tmp_path: Path, load: Any) -> None:
    path = tmp_path / "nope.jsonl"

    with pytest.raises(RolloutError) as raised:
        load(path)

    assert str(raised.value) == f"rollout file not found: {path}"


@pytest.mark.parametrize("load", [read_rollout, load_resume_state, replay_file])
def test_directory_is_a_clear_error(tmp_path: Path, load: Any) -> None:
    with pytest.raises(RolloutError) as raised:
        load(tmp_path)

    assert str(raised.value) == f"rollout path is a directory, not a file: {tmp_path}"


def test_path_under_a_file_is_a_clear_error(tmp_path: Path) -> None:
    parent = tmp_path / "file"
    parent.write_text("x")

    with pytest.raises(RolloutError) as raised:
        read_rollout(parent / "rollout.jsonl")

    assert (
        str(raised.value) == f"cannot read rollout file {parent / 'rollout.jsonl'}: Not a directory"
    )


@pytest.mark.ci_may_skip
@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of their mode")
def test_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "locked.jsonl"
    path.write_bytes(golden("minimal/single_turn.jsonl").read_bytes())
    path.chmod(0)

    with pytest.raises(RolloutError) as raised:
        read_rollout(path)

    assert str(raised.value) == f"cannot read rollout file (permission denied): {path}"


# --- decoding -------------------------------------------------------------------------------------


def test_decode_line_counts_bad_unknown_and_skipped_lines() -> None:
    stats = ReadStats()

    decoded = [
        decode_line(obj, stats)
        for obj in (
            {"type": "world_state", "payload": {"full": True, "state": [1]}},
            {"type": "world_state", "payload": {"full": True, "state": None}},
            {"type": "token_usage_record", "payload": {"usage": {}}},
            {"type": "response_item", "payload": {"type": "ghost_snapshot"}},
            {"record_type": "state"},
            "a string",
        )
    ]

    assert [type(line).__name__ for line in decoded] == [
        "NoneType",
        "NoneType",
        "UnknownLine",
        "NoneType",
        "NoneType",
        "NoneType",
    ]
    assert stats == ReadStats(lines=6, bad_lines=3, unknown_items=1)


def test_later_session_meta_lines_do_not_change_identity(tmp_path: Path) -> None:
    lines = [
        {"type": "session_meta", "payload": {"id": "child", "session_id": "thread-child"}},
        {"type": "session_meta", "payload": {"id": "parent"}},
    ]
    path = tmp_path / "fork.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))

    read = read_rollout(path)

    assert read.thread_id == "thread-child"
    assert len(read.lines) == 2
    assert load_resume_state(path).session_meta == read.session_meta


def test_iter_lines_reverse_yields_typed_lines_newest_first() -> None:
    path = golden("minimal/single_turn.jsonl")
    stats = ReadStats()

    newest_first = list(iter_lines_reverse(path, stats))

    assert newest_first == list(reversed(read_rollout(path).lines))
    assert stats == ReadStats(lines=9)


# --- reverse streaming ----------------------------------------------------------------------------

_line = st.binary(max_size=40).map(lambda raw: raw.replace(b"\n", b"x"))


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(_line, max_size=12),
    terminated=st.booleans(),
    block_size=st.integers(min_value=1, max_value=64),
)
def test_reverse_reader_yields_the_forward_lines_reversed(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[bytes],
    terminated: bool,
    block_size: int,
) -> None:
    path = tmp_path_factory.mktemp("reverse") / "rollout.jsonl"
    data = b"\n".join(lines) + (b"\n" if terminated and lines else b"")
    path.write_bytes(data)
    expected = [line.strip() for line in data.split(b"\n") if line.strip()]

    assert list(iter_raw_lines_reverse(path, block_size=block_size)) == expected[::-1]


def test_reverse_reader_assembles_a_line_longer_than_many_blocks(tmp_path: Path) -> None:
    long_line = orjson.dumps({"type": "compacted", "payload": {"message": "x" * 100_000}})
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"a":1}\n' + long_line + b"\n" + b'{"b":2}')

    assert list(iter_raw_lines_reverse(path, block_size=1000)) == [
        b'{"b":2}',
        long_line,
        b'{"a":1}',
    ]


# --- zstd -----------------------------------------------------------------------------------------


def test_zstd_compressed_rollout_reads_like_the_plain_file(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    plain = golden("features/rollback.jsonl")
    compressed = tmp_path / "rollout.jsonl.zst"
    compressed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))

    assert read_rollout(compressed).lines == read_rollout(plain).lines
    assert load_resume_state(compressed).history == replay_golden("features/rollback.jsonl").history


def test_truncated_zstd_stream_keeps_the_lines_before_the_damage(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    plain = golden("features/rollback.jsonl").read_bytes().splitlines(keepends=True)
    writer = zstandard.ZstdCompressor().compressobj()
    data = b"".join(
        writer.compress(line) + writer.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK) for line in plain
    )
    compressed = tmp_path / "torn.jsonl.zst"
    compressed.write_bytes(data[: len(data) // 2])  # a writer killed mid-stream

    read = read_rollout(compressed)

    assert 0 < len(read.lines) < len(plain)
    assert [line.to_json() for line in read.lines] == [
        orjson.loads(line) for line in plain[: len(read.lines)]
    ]
    assert read.stats.bad_lines <= 1  # at most the torn last line


def test_zstd_rollout_without_zstandard_names_the_missing_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rollout.jsonl.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # makes `import zstandard` fail

    for load in (read_rollout, load_resume_state):
        with pytest.raises(RolloutError) as raised:
            load(path)

        assert str(raised.value) == (
            f"reading {path} needs the 'zstandard' package (install mini-codex[zstd])"
        )


def test_file_that_is_not_zstd_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("zstandard")
    path = tmp_path / "rollout.jsonl.zst"
    path.write_bytes(golden("minimal/single_turn.jsonl").read_bytes())

    with pytest.raises(
        RolloutError, match=r"^cannot decompress rollout file .*rollout\.jsonl\.zst"
    ):
        read_rollout(path)


def test_response_item_lines_round_trip_to_equal_json() -> None:
    path = golden("features/world_state_patches.jsonl")
    originals = [orjson.loads(raw) for raw in path.read_bytes().splitlines()]

    read = read_rollout(path)

    assert [line.to_json() for line in read.lines] == originals
    assert all(
        isinstance(line, ResponseItemLine) for line in read.lines if line.type == "response_item"
    )


def test_fast_path_knows_every_event_model_of_the_protocol() -> None:
    """The fast path decides which events are ``UnknownEvent`` itself; it must not miss one."""
    members = {get_args(member)[0] for member in get_args(get_args(EventMsg)[0])}

    assert members - set(EVENT_MODELS.values()) == {UnknownEvent}


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "task_started", "turn_id": 7},
        {"type": "task_started", "model_context_window": "1000"},
        {"type": "user_message"},
        {"type": "user_message", "message": "hi", "images": "no"},
        {"type": "thread_rolled_back", "num_turns": True},
        {"type": "thread_rolled_back", "num_turns": "2"},
        {"type": "token_count", "info": []},
        {"type": "agent_message", "message": None},
        {"type": "item_completed", "item": 1},
    ],
)
def test_fast_and_typed_decoding_agree_on_event_payloads(payload: dict[str, Any]) -> None:
    line = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "event_msg", "payload": payload}
    typed_stats, fast_stats = ReadStats(), ReadStats()

    decode_line(line, typed_stats)
    classify(line, fast_stats)

    assert fast_stats == typed_stats
