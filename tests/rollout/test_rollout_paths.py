"""Rollout file naming: layout under the home directory, UUID v7 ids, parsing names back."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_codex.rollout.paths import (
    RolloutFileName,
    new_thread_id,
    parse_rollout_filename,
    rollout_path,
)

THREAD = "019b6b08-58f3-7580-9dca-fe3f30a10650"


def test_rollout_path_uses_local_wall_clock_zero_padded() -> None:
    created = datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=timezone(timedelta(hours=-8)))
    assert rollout_path(Path("/h"), created, THREAD) == Path(
        "/h/sessions/2026/03/04/rollout-2026-03-04T05-06-07-" + THREAD + ".jsonl"
    )


def test_rollout_path_rejects_naive_datetime_and_bad_ids() -> None:
    with pytest.raises(ValueError, match="aware"):
        rollout_path(Path("/h"), datetime(2026, 1, 1), THREAD)
    with pytest.raises(ValueError, match="not a UUID"):
        rollout_path(Path("/h"), datetime(2026, 1, 1, tzinfo=UTC), "../etc")


def test_new_thread_id_is_uuid_v7_with_given_time() -> None:
    thread_id = new_thread_id(0x0190_1234_5678, bytes(range(1, 11)))
    parsed = uuid.UUID(thread_id)
    assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)
    assert parsed.int >> 80 == 0x0190_1234_5678
    assert thread_id == "01901234-5678-7102-8304-05060708090a"


def test_new_thread_id_rejects_short_randomness_and_bad_time() -> None:
    with pytest.raises(ValueError, match="10 random bytes"):
        new_thread_id(1, b"abc")
    with pytest.raises(ValueError, match="out of range"):
        new_thread_id(-1, bytes(10))


@given(
    st.integers(min_value=0, max_value=(1 << 48) - 2),
    st.binary(min_size=10, max_size=10),
    st.binary(min_size=10, max_size=10),
)
def test_new_thread_ids_sort_by_time(ms: int, rand1: bytes, rand2: bytes) -> None:
    assert new_thread_id(ms, rand1) < new_thread_id(ms + 1, rand2)


def test_parse_rollout_filename_round_trips_rollout_path() -> None:
    created = datetime(2025, 12, 29, 11, 54, 27, tzinfo=UTC)
    name = rollout_path(Path("/h"), created, THREAD).name
    assert parse_rollout_filename(name) == RolloutFileName(
        created=datetime(2025, 12, 29, 11, 54, 27),
        thread_id=THREAD,
        rollout_id=None,
        compressed=False,
    )


def test_parse_rollout_filename_reverted_thread_and_zstd() -> None:
    other = "01a0d095-5bd9-7d73-871a-b6756ea97139"
    name = f"rollout-2026-09-23T19-24-04-{THREAD}_{other.upper()}.jsonl.zst"
    assert parse_rollout_filename(name) == RolloutFileName(
        created=datetime(2026, 9, 23, 19, 24, 4),
        thread_id=THREAD,
        rollout_id=other,
        compressed=True,
    )


@pytest.mark.parametrize(
    "name",
    [
        "rollout.jsonl",
        f"rollout-2026-09-23T19-24-04-{THREAD}.json",
        f"rollout-2026-13-23T19-24-04-{THREAD}.jsonl",
        f"rollout-2026-09-23T19-24-04-{THREAD}.jsonl.tmp",
        f"x-rollout-2026-09-23T19-24-04-{THREAD}.jsonl",
    ],
)
def test_parse_rollout_filename_rejects_other_names(name: str) -> None:
    assert parse_rollout_filename(name) is None
