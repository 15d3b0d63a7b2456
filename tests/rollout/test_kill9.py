"""Fault tests with real processes: kill -9 at random points, two writers on one file.

A child process (``kill9_writer.py``) writes a long scripted session through RolloutRecorder; the
parent kills it with SIGKILL at random points and checks every resulting file: it reads and
reconstructs without error, verifies (I1, I3, I5, I6) with no violations, its reconstructed
history is a prefix of the complete run's, and a resumed recorder can append a valid next turn.

Children are forked from a pre-imported server (``kill9_writer.py serve``): importing pydantic and
anyio costs ~0.6 s per interpreter here, ~3× the session itself, and each kill still hits its own
process.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import anyio
import orjson
import pytest

from mini_codex.protocol import (
    EventMsgLine,
    ResponseItem,
    ResponseItemLine,
    RolloutLine,
    TaskComplete,
    TaskStarted,
    TurnContextItem,
    TurnContextLine,
    WorldStateItem,
    WorldStateLine,
    assistant_message,
    developer_message,
    user_message,
)
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.recorder import RolloutRecorder
from mini_codex.rollout.replay import Reconstructed, reconstruct
from mini_codex.rollout.replay.verify import check_rollout

WRITER = Path(__file__).with_name("kill9_writer.py")
SEED = 7
KILLS = 60


def writer_command(*args: str) -> list[str]:
    return [sys.executable, str(WRITER), *args]


def read_line(stream: IO[str]) -> str:
    line = stream.readline()
    if not line:
        raise AssertionError("writer process closed its output unexpectedly")
    return line.rstrip("\n")


def torn_tail(path: Path) -> int | None:
    """Line number of an unterminated last line, if the file has one.

    SIGKILL can cut one ``write(2)`` of a multi-page line short: Linux checks for fatal signals
    between the pages it copies. So a killed writer may leave its last line torn; every earlier
    line must be intact.
    """
    data = path.read_bytes()
    return None if not data or data.endswith(b"\n") else data.count(b"\n") + 1


def check_file(path: Path, *, torn_line: int | None = None) -> Reconstructed:
    """Every killed or finished file must read, reconstruct and verify cleanly.

    ``torn_line``: the one line allowed to be bad (a torn tail left by SIGKILL).
    """
    rollout = read_rollout(path)
    if torn_line is None or rollout.stats.bad_lines == 0:
        assert rollout.stats.bad_lines == 0, rollout.warnings
    else:
        assert rollout.warnings == (f"line {torn_line}: not valid JSON, skipped",)
    rebuilt = reconstruct(rollout.lines)
    checked = check_rollout(rollout.lines)
    assert checked.violations == []
    assert checked.baseline == rebuilt.world_state
    assert rebuilt.warnings == ()
    return rebuilt


@pytest.fixture(scope="module")
def complete_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[ResponseItem], int]:
    """History of an uninterrupted run (as reconstructed) and its number of progress markers."""
    path = tmp_path_factory.mktemp("complete") / "rollout.jsonl"
    result = subprocess.run(
        writer_command("run", str(path), str(SEED)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    markers = result.stdout.splitlines().count("m")
    rebuilt = check_file(path)
    recorded = orjson.loads(Path(f"{path}.history.json").read_bytes())
    assert [item.to_json() for item in rebuilt.history] == recorded
    return list(rebuilt.history), markers


@pytest.fixture
def fork_server() -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        writer_command("serve"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as server:
        assert server.stdout is not None
        assert read_line(server.stdout) == "ready"
        yield server
        assert server.stdin is not None
        server.stdin.close()
        assert server.wait(timeout=30) == 0


def kill_at(server: subprocess.Popen[str], path: Path, target: int, delay: float) -> str:
    """Start a writer child, SIGKILL it after ``target`` markers plus ``delay`` seconds."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(f"{path} {SEED}\n")
    server.stdin.flush()
    first = read_line(server.stdout)
    assert first.startswith("start "), first
    pid = int(first.split()[1])
    seen = 0
    line = ""
    while seen < target:
        line = read_line(server.stdout)
        if line != "m":
            break
        seen += 1
    if line == "m" or target == 0:
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)  # the fork server reaps it
    while not line.startswith("exit "):
        line = read_line(server.stdout)
    return line


async def append_next_turn(path: Path, state: Reconstructed) -> list[ResponseItem]:
    """Resume ``path`` like a session would and record one more turn."""
    context_items = [developer_message("<permissions>resumed</permissions>")]
    new_items: list[ResponseItem] = [*context_items, user_message("go on"), assistant_message("ok")]
    lines: list[RolloutLine] = [EventMsgLine(payload=TaskStarted(turn_id="resumed"))]
    lines += [ResponseItemLine(payload=item) for item in context_items]
    if state.world_state is None:
        lines.append(WorldStateLine(payload=WorldStateItem(full=True, state={"model": {}})))
    lines += [
        TurnContextLine(payload=TurnContextItem(turn_id="resumed", model="m")),
        ResponseItemLine(payload=new_items[1]),
        ResponseItemLine(payload=new_items[2]),
        EventMsgLine(payload=TaskComplete(turn_id="resumed")),
    ]
    async with RolloutRecorder.open(path) as recorder:
        await recorder.record(lines)
        await recorder.turn_ended()
    return new_items


@pytest.mark.slow
def test_sigkill_at_random_points_leaves_a_replayable_prefix(
    complete_run: tuple[list[ResponseItem], int],
    fork_server: subprocess.Popen[str],
    tmp_path: Path,
) -> None:
    final_history, markers = complete_run
    rng = random.Random(20261129)
    outcomes = {"killed": 0, "finished": 0, "no file": 0}
    lengths: set[int] = set()
    for index in range(KILLS):
        path = tmp_path / f"k{index}" / "rollout.jsonl"
        status = kill_at(fork_server, path, rng.randrange(markers), rng.uniform(0, 0.003))
        killed = status == f"exit {signal.SIGKILL}"
        assert killed or status == "exit 0", status
        if not path.exists():
            outcomes["no file"] += 1
            continue
        outcomes["killed" if killed else "finished"] += 1
        torn = torn_tail(path) if killed else None
        rebuilt = check_file(path, torn_line=torn)
        history = list(rebuilt.history)
        assert history == final_history[: len(history)]
        lengths.add(len(history))
        appended = anyio.run(append_next_turn, path, rebuilt)  # terminates a torn tail
        assert torn_tail(path) is None
        assert list(check_file(path, torn_line=torn).history) == history + appended
    assert outcomes["killed"] >= 50, outcomes
    assert len(lengths) >= 20, sorted(lengths)  # the kill points really are spread out


@pytest.mark.slow
def test_second_process_fails_fast_while_first_keeps_writing(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    with subprocess.Popen(
        writer_command("run", str(path), str(SEED), "--hold"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as first:
        assert first.stdin is not None
        assert first.stdout is not None
        while read_line(first.stdout) != "holding":
            pass
        before = path.read_bytes()
        for command in ("append", "create"):
            started = time.monotonic()
            second = subprocess.run(
                writer_command(command, str(path)), capture_output=True, text=True, timeout=30
            )
            assert second.returncode == 3, second.stderr
            assert second.stdout.startswith(f"locked: RolloutLockedError: rollout {path} ")
            assert time.monotonic() - started < 10
        assert path.read_bytes() == before
        first.stdin.write("go\n")
        first.stdin.flush()
        assert first.stdout.read().splitlines()[-1] == "done"
        first.stdin.close()
        assert first.wait(timeout=30) == 0
    rebuilt = check_file(path)
    recorded = orjson.loads(Path(f"{path}.history.json").read_bytes())
    assert [item.to_json() for item in rebuilt.history] == recorded
