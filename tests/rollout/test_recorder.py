"""RolloutRecorder: order, laziness, resume, lock, torn-line repair, fsync policy, I/O errors."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mini_codex.errors import RolloutError, RolloutLockedError
from mini_codex.protocol import (
    MINI_CODEX_SCHEMA,
    CompactedItem,
    CompactedLine,
    EventMsgLine,
    FunctionCall,
    ResponseItemLine,
    RolloutLine,
    SessionMeta,
    TaskComplete,
    TaskStarted,
    TurnContextItem,
    TurnContextLine,
    UserMessageEvent,
    WorldStateItem,
    WorldStateLine,
    assistant_message,
    user_message,
)
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.recorder import RecorderOptions, RolloutRecorder
from mini_codex.rollout.replay import reconstruct
from mini_codex.rollout.replay.checkpoint import PreviousTurnSettings, WindowInfo

pytestmark = pytest.mark.anyio

META = SessionMeta(id="019b6b08-58f3-7580-9dca-fe3f30a10650", cwd="/repo", originator="test")
T0 = datetime(2026, 8, 22, 0, 42, 19, 123000, tzinfo=UTC)


def ticking_clock(start: datetime = T0) -> Callable[[], datetime]:
    """Each call is one millisecond after the previous one."""
    ticks = iter(range(1_000_000))
    return lambda: start + timedelta(milliseconds=next(ticks))


def turn_lines(text: str) -> list[RolloutLine]:
    return [
        EventMsgLine(payload=TaskStarted(turn_id="t1")),
        ResponseItemLine(payload=user_message(text)),
        WorldStateLine(payload=WorldStateItem(full=True, state={"model": {"name": "m"}})),
        TurnContextLine(payload=TurnContextItem(turn_id="t1", cwd="/repo", model="m")),
        ResponseItemLine(payload=FunctionCall(name="shell", arguments="{}", call_id="c1")),
        ResponseItemLine(payload=assistant_message("done")),
        EventMsgLine(payload=TaskComplete(turn_id="t1")),
    ]


def read_objects(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def expected_objects(lines: list[RolloutLine], start: int = 0) -> list[dict[str, Any]]:
    clock = ticking_clock()
    for _ in range(start):
        clock()
    return [
        {"timestamp": _ts(clock()), **{k: v for k, v in line.to_json().items() if k != "timestamp"}}
        for line in lines
    ]


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def session_path(tmp_path: Path) -> Path:
    return (
        tmp_path
        / "sessions"
        / "2026"
        / "08"
        / "22"
        / f"rollout-2026-08-22T00-42-19-{META.id}.jsonl"
    )


async def test_lines_are_written_in_call_order_after_session_meta(tmp_path: Path) -> None:
    path = session_path(tmp_path)
    lines = turn_lines("hello")
    async with RolloutRecorder.open(path, session_meta=META, clock=ticking_clock()) as rec:
        await rec.record(lines[:3])
        await rec.record(lines[3:])
        await rec.flush()
        assert rec.lines_written == 1 + len(lines)
    meta = {
        "timestamp": "2026-08-22T00:42:19.123Z",
        "type": "session_meta",
        "payload": {**META.to_json(), "mini_codex_schema": MINI_CODEX_SCHEMA},
    }
    assert read_objects(path) == [meta, *expected_objects(lines, start=1)]
    assert path.read_bytes().endswith(b"\n")


async def test_recorded_timestamp_is_replaced_by_write_time(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    line = ResponseItemLine(timestamp="1999-01-01T00:00:00.000Z", payload=user_message("x"))
    async with RolloutRecorder.open(path, session_meta=META, clock=ticking_clock()) as rec:
        await rec.record([line])
    assert [obj["timestamp"] for obj in read_objects(path)] == [
        "2026-08-22T00:42:19.123Z",
        "2026-08-22T00:42:19.124Z",
    ]


async def test_nothing_touches_disk_until_first_record(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "2026" / "x.jsonl"
    async with RolloutRecorder.open(path, session_meta=META) as rec:
        await rec.flush()
        await rec.turn_ended()
        assert not rec.materialized
        assert not (tmp_path / "sessions").exists()
    assert not (tmp_path / "sessions").exists()


async def test_materialize_writes_only_session_meta(tmp_path: Path) -> None:
    path = tmp_path / "a" / "r.jsonl"
    async with RolloutRecorder.open(path, session_meta=META, clock=ticking_clock()) as rec:
        await rec.materialize()
        await rec.materialize()
        assert path.exists()
    assert [obj["type"] for obj in read_objects(path)] == ["session_meta"]


async def test_resume_appends_without_new_session_meta(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    async with RolloutRecorder.open(path, session_meta=META) as rec:
        await rec.record(turn_lines("one"))
    before = path.read_bytes()
    async with RolloutRecorder.open(path) as rec:
        await rec.record([ResponseItemLine(payload=user_message("two"))])
    after = path.read_bytes()
    assert after.startswith(before)
    assert [obj["type"] for obj in read_objects(path)].count("session_meta") == 1
    assert read_objects(path)[-1]["payload"] == user_message("two").to_json()


async def test_resume_repairs_torn_last_line_once(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    async with RolloutRecorder.open(path, session_meta=META) as rec:
        await rec.record([ResponseItemLine(payload=user_message("one"))])
    with path.open("ab") as handle:
        handle.write(b'{"timestamp":"2026-08-22T00:42:19.123Z","type":"respo')
    async with RolloutRecorder.open(path):
        pass  # opening alone terminates the torn line
    async with RolloutRecorder.open(path):
        pass  # idempotent: already terminated
    async with RolloutRecorder.open(path) as rec:
        await rec.record([ResponseItemLine(payload=user_message("two"))])
    raw = path.read_bytes().splitlines()
    assert raw[2] == b'{"timestamp":"2026-08-22T00:42:19.123Z","type":"respo'
    assert len(raw) == 4
    assert orjson.loads(raw[3])["payload"] == user_message("two").to_json()
    rollout = read_rollout(path)
    assert (rollout.stats.lines, rollout.stats.bad_lines) == (4, 1)
    assert [line.type for line in rollout.lines] == [
        "session_meta",
        "response_item",
        "response_item",
    ]


async def test_resume_of_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "missing.jsonl"
    with pytest.raises(RolloutError, match=r"cannot resume rollout .*missing\.jsonl: no such file"):
        async with RolloutRecorder.open(path):
            pass


async def test_new_session_refuses_existing_non_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"type":"x"}\n')
    async with RolloutRecorder.open(path, session_meta=META) as rec:
        with pytest.raises(RolloutError, match="already exists"):
            await rec.record([ResponseItemLine(payload=user_message("x"))])
    assert path.read_bytes() == b'{"type":"x"}\n'


async def test_second_writer_in_same_process_fails_fast_and_first_keeps_writing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    async with RolloutRecorder.open(path, session_meta=META) as first:
        await first.record([ResponseItemLine(payload=user_message("one"))])
        await first.flush()
        snapshot = path.read_bytes()
        with pytest.raises(RolloutLockedError, match=str(path)):
            async with RolloutRecorder.open(path):
                pass
        async with RolloutRecorder.open(path, session_meta=META) as second:
            with pytest.raises(RolloutLockedError, match="already being written"):
                await second.record([ResponseItemLine(payload=user_message("intruder"))])
        assert path.read_bytes() == snapshot
        await first.record([ResponseItemLine(payload=user_message("two"))])
    texts = [obj["payload"].get("content") for obj in read_objects(path)[1:]]
    assert texts == [
        user_message("one").to_json()["content"],
        user_message("two").to_json()["content"],
    ]
    async with RolloutRecorder.open(path):  # the lock is released on close
        pass


async def test_fsync_at_turn_end_and_shutdown_follow_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    path = tmp_path / "a.jsonl"
    async with RolloutRecorder.open(path, session_meta=META) as rec:
        await rec.record(turn_lines("x"))
        await rec.flush()
        assert calls == []
        await rec.turn_ended()
        assert len(calls) == 1
    assert len(calls) == 2
    calls.clear()
    quiet = RecorderOptions(fsync_at_turn_end=False, fsync_on_shutdown=False)
    async with RolloutRecorder.open(tmp_path / "b.jsonl", session_meta=META, options=quiet) as rec:
        await rec.record(turn_lines("x"))
        await rec.turn_ended()
    assert calls == []


async def test_record_after_close_is_an_error(tmp_path: Path) -> None:
    async with RolloutRecorder.open(tmp_path / "r.jsonl", session_meta=META) as rec:
        pass
    with pytest.raises(RolloutError, match="closed"):
        await rec.record([ResponseItemLine(payload=user_message("late"))])


async def test_recorder_in_caller_task_group_writes_queued_lines_when_cancelled(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    rec = RolloutRecorder(path, session_meta=META)
    async with anyio.create_task_group() as task_group:
        await rec.start(task_group)
        for index in range(50):
            await rec.record([ResponseItemLine(payload=user_message(f"m{index}"))])
        task_group.cancel_scope.cancel()
    assert len(read_objects(path)) == 51
    await rec.aclose()  # idempotent after the writer stopped
    async with RolloutRecorder.open(path):  # lock released
        pass


class FlakyWrites:
    """Patch ``os.write``: after ``ok_writes`` good writes, write half of one line, then fail."""

    def __init__(self, ok_writes: int, failures: int) -> None:
        self.ok_writes = ok_writes
        self.failures = failures
        self.real = os.write
        self.torn = False

    def __call__(self, fd: int, data: Any) -> int:
        if self.ok_writes > 0:
            self.ok_writes -= 1
            return self.real(fd, data)
        if not self.torn:
            self.torn = True
            return self.real(fd, bytes(data)[: len(data) // 2])
        if self.failures > 0:
            self.failures -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.real(fd, data)


@pytest.fixture
def flaky(monkeypatch: pytest.MonkeyPatch) -> Callable[[int, int], FlakyWrites]:
    def install(ok_writes: int, failures: int) -> FlakyWrites:
        patch = FlakyWrites(ok_writes, failures)
        monkeypatch.setattr(os, "write", patch)
        return patch

    return install


async def test_write_error_is_retried_at_next_barrier_without_loss_or_torn_line(
    tmp_path: Path, flaky: Callable[[int, int], FlakyWrites]
) -> None:
    path = tmp_path / "r.jsonl"
    lines = [ResponseItemLine(payload=user_message(f"m{i}")) for i in range(5)]
    async with RolloutRecorder.open(path, session_meta=META, clock=ticking_clock()) as rec:
        await rec.materialize()
        flaky(2, 1)  # m0, m1 fine; m2 torn halfway, then ENOSPC once
        await rec.record(lines)
        await rec.flush()  # reopen, drop our own torn half line, retry: succeeds
    assert [obj["payload"] for obj in read_objects(path)[1:]] == [
        line.payload.to_json() for line in lines
    ]


async def test_persistent_write_error_surfaces_at_barrier_and_keeps_lines(
    tmp_path: Path, flaky: Callable[[int, int], FlakyWrites]
) -> None:
    path = tmp_path / "r.jsonl"
    lines = [ResponseItemLine(payload=user_message(f"m{i}")) for i in range(3)]
    async with RolloutRecorder.open(path, session_meta=META) as rec:
        await rec.materialize()
        flaky(1, 2)  # m0 fine, m1 torn, then two failures: the first barrier's retry fails too
        await rec.record(lines)
        with pytest.raises(RolloutError, match=r"No space left.*2 line\(s\) are held in memory"):
            await rec.flush()
        await rec.flush()  # the disk has room again: everything held is written
    assert [obj["payload"] for obj in read_objects(path)[1:]] == [
        line.payload.to_json() for line in lines
    ]


async def test_checkpoint_counters_count_lines_since_the_last_checkpoint(tmp_path: Path) -> None:
    options = RecorderOptions(
        checkpoint_every_items=3, checkpoint_every_bytes=10**9, checkpoint_min_ratio=0
    )
    async with RolloutRecorder.open(
        tmp_path / "r.jsonl", session_meta=META, options=options
    ) as rec:
        await rec.record([ResponseItemLine(payload=user_message("a"))])
        await rec.record([CompactedLine(payload=CompactedItem(message="summary"))])
        assert not rec.checkpoint_due()
        # A compaction is no checkpoint: it counts like any line and resets nothing.
        await rec.record([ResponseItemLine(payload=user_message("b"))])
        assert rec.checkpoint_due()
        assert await rec.write_checkpoint([user_message("b")], None, None, None, WindowInfo(1))
        assert not rec.checkpoint_due()
    by_bytes = RecorderOptions(
        checkpoint_every_items=10**9, checkpoint_every_bytes=1000, checkpoint_min_ratio=0
    )
    async with RolloutRecorder.open(
        tmp_path / "s.jsonl", session_meta=META, options=by_bytes
    ) as rec:
        await rec.record([ResponseItemLine(payload=user_message("x" * 500))])
        assert not rec.checkpoint_due()
        await rec.record([ResponseItemLine(payload=user_message("x" * 500))])
        assert rec.checkpoint_due()


async def test_write_checkpoint_appends_compacted_and_full_world_state(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    context = TurnContextItem(turn_id="t1", cwd="/repo", model="m")
    history = [user_message("hi"), assistant_message("hello")]
    options = RecorderOptions(checkpoint_every_items=2, checkpoint_min_ratio=0)
    async with RolloutRecorder.open(path, session_meta=META, options=options) as rec:
        await rec.record(turn_lines("hi"))
        assert rec.checkpoint_due()
        await rec.write_checkpoint(
            history,
            {"model": {"name": "m"}},
            context,
            PreviousTurnSettings("m", None, None),
            WindowInfo(0),
        )
        assert not rec.checkpoint_due()
    objects = read_objects(path)
    assert [obj["type"] for obj in objects[-2:]] == ["compacted", "world_state"]
    assert objects[-2]["payload"] == {
        "message": "",
        "replacement_history": [item.to_json() for item in history],
        "mini_codex_checkpoint": {
            "reference_context": context.to_json(),
            "previous_turn_settings": {"model": "m", "comp_hash": None, "realtime_active": None},
            "window": {"number": 0, "first_id": None, "previous_id": None, "current_id": None},
        },
    }
    assert objects[-1]["payload"] == {"full": True, "state": {"model": {"name": "m"}}}
    rebuilt = reconstruct(read_rollout(path).lines)
    assert (rebuilt.history, rebuilt.world_state, rebuilt.reference_context) == (
        tuple(history),
        {"model": {"name": "m"}},
        context,
    )


async def test_checkpoint_without_baseline_writes_no_world_state(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    options = RecorderOptions(checkpoint_min_ratio=0)
    async with RolloutRecorder.open(path, session_meta=META, options=options) as rec:
        assert await rec.write_checkpoint([user_message("hi")], None, None, None, WindowInfo(0))
    assert [obj["type"] for obj in read_objects(path)] == ["session_meta", "compacted"]


async def test_a_checkpoint_costing_more_than_its_share_is_declined(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    history = [user_message("x" * 1000)]
    options = RecorderOptions(checkpoint_every_items=1)  # ratio 5
    async with RolloutRecorder.open(path, session_meta=META, options=options) as rec:
        await rec.record([ResponseItemLine(payload=item) for item in history])
        assert rec.checkpoint_due()
        assert not await rec.write_checkpoint(history, None, None, None, WindowInfo(0))
        assert not rec.checkpoint_due()  # not before 5× the declined size was recorded
        event = EventMsgLine(payload=UserMessageEvent(message="e" * 1000))
        events = 0
        while not rec.checkpoint_due():
            await rec.record([event])
            events += 1
            assert events < 20
        assert await rec.write_checkpoint(history, None, None, None, WindowInfo(0))
    sizes = [len(line) for line in path.read_bytes().splitlines(keepends=True)]
    other, checkpoint = sum(sizes[1:-1]), sizes[-1]
    # Due exactly when five times the checkpoint's size had been recorded since the last one.
    assert other >= 5 * checkpoint > other - sizes[-2]
    assert [obj["type"] for obj in read_objects(path)][-2:] == ["event_msg", "compacted"]


async def test_a_compaction_makes_a_declined_checkpoint_worth_trying_again(
    tmp_path: Path,
) -> None:
    """Right after a compaction the history is the (small) replacement: the next checkpoint is
    tried at once, and written when ratio × its own size was recorded since the last one."""
    path = tmp_path / "r.jsonl"
    history = [user_message("x" * 1000) for _ in range(3)]
    options = RecorderOptions(checkpoint_every_items=1)  # ratio 5
    async with RolloutRecorder.open(path, session_meta=META, options=options) as rec:
        await rec.record([ResponseItemLine(payload=item) for item in history])
        assert not await rec.write_checkpoint(history, None, None, None, WindowInfo(0))
        assert not rec.checkpoint_due()
        replacement = [user_message("summary")]
        compacted = CompactedItem(message="summary", replacement_history=replacement)
        await rec.record([CompactedLine(payload=compacted)])
        assert rec.checkpoint_due()
        assert await rec.write_checkpoint(replacement, None, None, None, WindowInfo(1))
    assert [obj["type"] for obj in read_objects(path)] == [
        "session_meta",
        *["response_item"] * 3,
        "compacted",
        "compacted",
    ]
    assert "mini_codex_checkpoint" in read_objects(path)[-1]["payload"]


async def test_close_with_unwritable_lines_raises_naming_what_was_lost(
    tmp_path: Path, flaky: Callable[[int, int], FlakyWrites]
) -> None:
    path = tmp_path / "r.jsonl"
    rec = RolloutRecorder(path, session_meta=META)
    async with anyio.create_task_group() as task_group:
        await rec.start(task_group)
        await rec.materialize()
        flaky(0, 100)
        await rec.record([ResponseItemLine(payload=user_message(f"m{i}")) for i in range(2)])
        with pytest.raises(RolloutError, match=r"closing with 2 line\(s\) unwritten") as raised:
            await rec.aclose()
    assert str(path) in str(raised.value)
    async with RolloutRecorder.open(path):  # the lock was released anyway
        pass


async def test_checkpoints_stay_a_bounded_fraction_of_the_file(tmp_path: Path) -> None:
    """Whatever is recorded, checkpoint lines (``compacted`` + full ``world_state``) are at most
    1 / ``checkpoint_min_ratio`` of the other lines: each waits until that many times its cost
    was recorded since the previous one."""
    import random

    rng = random.Random(11)
    path = tmp_path / "r.jsonl"
    options = RecorderOptions(checkpoint_every_items=20, checkpoint_min_ratio=5)
    history: list[Any] = []
    state: dict[str, Any] = {"files": {}}
    written = 0
    async with RolloutRecorder.open(path, session_meta=META, options=options) as rec:
        await rec.record([WorldStateLine(payload=WorldStateItem(full=True, state=state))])
        for step in range(3000):
            roll = rng.random()
            if roll < 0.35:
                item = user_message("x" * rng.randrange(10, 400))
                history.append(item)
                await rec.record([ResponseItemLine(payload=item)])
            elif roll < 0.7:
                await rec.record([EventMsgLine(payload=UserMessageEvent(message="e" * 300))])
            elif roll < 0.95:
                patch = {"files": {f"f{step}": rng.randrange(100)}}
                state["files"].update(patch["files"])
                await rec.record([WorldStateLine(payload=WorldStateItem(full=False, state=patch))])
            else:
                history = history[-3:]
                await rec.record(
                    [CompactedLine(payload=CompactedItem(message="s", replacement_history=history))]
                )
            if rec.checkpoint_due():
                await rec.write_checkpoint(history, state, None, None, WindowInfo(0))
                written += 1
    checkpoint = other = 0
    previous_checkpoint = False
    for raw in path.read_bytes().splitlines(keepends=True)[1:]:
        obj = orjson.loads(raw)
        is_checkpoint = obj["type"] == "compacted" and "mini_codex_checkpoint" in obj["payload"]
        if is_checkpoint or (previous_checkpoint and obj["type"] == "world_state"):
            checkpoint += len(raw)
        else:
            other += len(raw)
        previous_checkpoint = is_checkpoint
    assert written >= 3
    assert checkpoint <= other / 5
