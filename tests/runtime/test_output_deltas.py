"""Live command output: ``exec_command_output_delta`` events, coalesced (≤ 20 events/s and ≤ 8 KiB
each per call), emitted before the call's ``tool_call_end``, never in the rollout or history."""

from __future__ import annotations

import base64
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from runtime_harness import open_session

from mini_codex.config import load_config
from mini_codex.protocol.items import FunctionCallOutput
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.protocol.session_events import (
    ExecCommandOutputDelta,
    SessionEvent,
    ToolCallBegin,
    ToolCallEnd,
)
from mini_codex.runtime.exec_events import ExecEventMapper
from mini_codex.runtime.output_deltas import DEFAULT_MAX_BYTES, OutputDeltas
from mini_codex.testing import ScriptedResponse, assistant, function_call

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def delta(data: bytes, call_id: str = "c1") -> ExecCommandOutputDelta:
    return ExecCommandOutputDelta(
        call_id=call_id, stream="stdout", chunk=base64.b64encode(data).decode()
    )


def test_the_event_has_codexs_name_and_shape() -> None:
    event = ExecCommandOutputDelta.of("call_7", b"caf\xc3")
    assert event.to_json() == {
        "type": "exec_command_output_delta",
        "call_id": "call_7",
        "stream": "stdout",
        "chunk": "Y2Fmww==",
    }
    assert event.data() == b"caf\xc3"


def test_chunks_are_coalesced_per_interval_and_bounded() -> None:
    clock = Clock()
    out: list[ExecCommandOutputDelta] = []
    deltas = OutputDeltas("c1", out.append, interval_s=0.05, max_bytes=8, clock=clock)
    deltas.feed(b"first\n")  # after a quiet period: at once
    deltas.feed(b"ab")  # within the interval: held back
    clock.now += 0.01
    deltas.feed(b"cd")
    assert out == [delta(b"first\n")]
    assert deltas.pending.is_set()
    assert deltas.due_in() == pytest.approx(0.04)
    clock.now += 0.05
    deltas.feed(b"efghijkl")  # 12 bytes pending, 8 kept: the newest
    assert out == [delta(b"first\n"), delta(b"efghijkl")]
    assert deltas.dropped == 4
    deltas.feed(b"tail")
    deltas.flush()
    deltas.flush()  # nothing left: no empty event
    assert out == [delta(b"first\n"), delta(b"efghijkl"), delta(b"tail")]
    assert not deltas.pending.is_set()


@given(st.lists(st.tuples(st.binary(max_size=40), st.floats(0, 0.2)), max_size=30))
def test_without_overflow_the_deltas_are_the_output_in_order(
    chunks: list[tuple[bytes, float]],
) -> None:
    clock = Clock()
    out: list[ExecCommandOutputDelta] = []
    deltas = OutputDeltas("c1", out.append, interval_s=0.05, max_bytes=10_000, clock=clock)
    for data, pause in chunks:
        clock.now += pause
        deltas.feed(data)
    deltas.flush()
    assert b"".join(event.data() for event in out) == b"".join(data for data, _ in chunks)
    assert all(event.data() for event in out)
    assert deltas.dropped == 0


@given(st.lists(st.binary(min_size=1, max_size=50), min_size=1, max_size=40))
def test_with_overflow_every_byte_is_emitted_or_counted_and_the_end_is_kept(
    chunks: list[bytes],
) -> None:
    clock = Clock()
    out: list[ExecCommandOutputDelta] = []
    deltas = OutputDeltas("c1", out.append, interval_s=0.05, max_bytes=16, clock=clock)
    for data in chunks:  # all at the same instant: only the first is emitted at once
        deltas.feed(data)
    deltas.flush()
    emitted = b"".join(event.data() for event in out)
    everything = b"".join(chunks)
    assert len(emitted) + deltas.dropped == len(everything)
    assert everything.endswith(out[-1].data())
    assert all(len(event.data()) <= 16 for event in out)


def deltas_of(events: list[SessionEvent], call_id: str) -> list[ExecCommandOutputDelta]:
    return [e for e in events if isinstance(e, ExecCommandOutputDelta) and e.call_id == call_id]


def position(events: list[SessionEvent], kind: type, call_id: str) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, kind) and e.call_id == call_id)


async def test_a_shell_command_streams_its_output_live_and_the_rollout_keeps_none(
    tmp_path: Path,
) -> None:
    command = "for i in 1 2 3 4; do echo line$i; sleep 0.15; done"
    script = [
        ScriptedResponse([function_call("shell", {"command": command}, "s1")]),
        ScriptedResponse([assistant("done")]),
    ]
    sandbox = SandboxPolicy.danger_full_access()
    async with open_session(tmp_path, script, sandbox=sandbox) as run:
        assert await run.session.run_turn("count") == "done"
        events = list(run.events)
        live = deltas_of(events, "s1")
        # Printed 150 ms apart, more than the 50 ms interval: the lines arrive one by one (a
        # busy machine may deliver two reads together).
        assert b"".join(event.data() for event in live) == b"line1\nline2\nline3\nline4\n"
        assert len(live) >= 3
        begin = position(events, ToolCallBegin, "s1")
        end = position(events, ToolCallEnd, "s1")
        assert all(begin < events.index(event) < end for event in live)
        (end_event,) = run.events_of(ToolCallEnd)
        outputs = [
            item for item in run.session.history.items if isinstance(item, FunctionCallOutput)
        ]
        assert [item.output for item in outputs] == [end_event.output]
        assert end_event.output.endswith("Output:\nline1\nline2\nline3\nline4\n")
        rollout = run.session.rollout_path
    assert rollout is not None
    assert b"exec_command_output_delta" not in rollout.read_bytes()
    assert b"line1" in rollout.read_bytes()  # the output itself is recorded, once, as before


async def test_a_flood_of_output_is_throttled_per_call(tmp_path: Path) -> None:
    command = "head -c 6000000 /dev/zero | tr '\\0' x; echo; echo END"
    script = [
        ScriptedResponse([function_call("shell", {"command": command}, "f1")]),
        ScriptedResponse([assistant("ok")]),
    ]
    sandbox = SandboxPolicy.danger_full_access()
    async with open_session(tmp_path, script, sandbox=sandbox) as run:
        await run.session.run_turn("flood")
        live = deltas_of(run.events, "f1")
        (end,) = run.events_of(ToolCallEnd)
    assert live, "no live output"
    assert len(live) <= math.ceil(end.duration_s / 0.05) + 2
    assert all(len(event.data()) <= DEFAULT_MAX_BYTES for event in live)
    assert sum(len(event.data()) for event in live) < 6_000_000
    assert live[-1].data().endswith(b"x\nEND\n")  # the tail is always there at the end


async def test_exec_command_and_write_stdin_stream_under_their_own_call_ids(
    tmp_path: Path,
) -> None:
    config = load_config(None, ["tools.unified_exec=true"])
    command = "echo started; read answer; echo got $answer; sleep 0.2; echo bye"
    script = [
        ScriptedResponse(
            [function_call("exec_command", {"cmd": command, "yield_time_ms": 2000}, "e1")]
        ),
        ScriptedResponse(
            [
                function_call(
                    "write_stdin",
                    {"session_id": 1, "chars": "yes\n", "yield_time_ms": 3000},
                    "w1",
                )
            ]
        ),
        ScriptedResponse([assistant("finished")]),
    ]
    sandbox = SandboxPolicy.danger_full_access()
    async with open_session(tmp_path, script, config=config, sandbox=sandbox) as run:
        assert await run.session.run_turn("talk to it") == "finished"
        first = b"".join(event.data() for event in deltas_of(run.events, "e1"))
        second = deltas_of(run.events, "w1")
        ends = run.events_of(ToolCallEnd)
    assert first == b"started\n"
    assert b"".join(event.data() for event in second) == b"got yes\nbye\n"
    assert len(second) >= 2  # "bye" came 200 ms after "got yes": a second delta
    assert [end.details for end in ends] == [
        {"output": "started\n", "session_id": 1},
        {"output": "got yes\nbye\n", "exit_code": 0},
    ]


def test_codex_exec_json_has_no_event_for_deltas() -> None:
    assert ExecEventMapper().feed(delta(b"hello\n")) == []
