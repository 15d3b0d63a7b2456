"""Checkpoints in sessions that compact (docs/rollout.md, "Checkpoints"): a compaction bounds the
history, so a checkpoint costs at most about one window; it does not reset the checkpoint budget,
so a long turn that compacts again and again still gets checkpoints, and resume starts from the
newest one instead of scanning back to the turn's start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from runtime_harness import SleepTool, open_session

from mini_codex.config import Config, RolloutConfig
from mini_codex.models.base import Completed, Created, ModelEvent, OutputItemDone, Prompt
from mini_codex.protocol import FunctionCall, Message, assistant_message, message_text
from mini_codex.protocol.session_events import ContextCompacted, ErrorEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay import Reconstructed
from mini_codex.rollout.replay.checkpoint import CHECKPOINT_KEY
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.rollout.resume import load_resume_state, replay_file
from mini_codex.testing.long_session_model import LongSessionModel
from mini_codex.tools.base import ToolContext, ToolOutput

pytestmark = pytest.mark.anyio

CALLS = 80


class Loud(SleepTool):
    """Answers ~1,000 tokens, so a few calls fill a 10,000-token window."""

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(
            text="".join(f"line {i} of the output\n" for i in range(150)), success=True
        )


class ToolLoop:
    """Calls ``loud`` ``CALLS`` times in one turn, then answers; summarizes when asked."""

    def __init__(self) -> None:
        self.calls = 0
        self.requests = 0

    async def aclose(self) -> None:
        return None

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        self.requests += 1
        last = prompt.input[-1]
        item: FunctionCall | Message
        if isinstance(last, Message) and message_text(last).startswith("Your context window"):
            item = assistant_message(f"summary {self.requests}: call {self.calls} is next")
        elif self.calls < CALLS:
            self.calls += 1
            item = FunctionCall(call_id=f"call_{self.calls}", name="loud", arguments="{}")
        else:
            item = assistant_message("all done")
        yield Created(f"resp_{self.requests}")
        yield OutputItemDone(item)
        yield Completed(f"resp_{self.requests}")


def strip_checkpoints(source: Path, target: Path) -> int:
    """Copy ``source`` without its checkpoint lines (``compacted`` + its full ``world_state``);
    returns how many checkpoints were dropped."""
    kept: list[bytes] = []
    dropped = 0
    after_checkpoint = False
    for raw in source.read_bytes().splitlines(keepends=True):
        obj = orjson.loads(raw)
        if obj["type"] == "compacted" and CHECKPOINT_KEY in obj["payload"]:
            dropped += 1
            after_checkpoint = True
            continue
        if after_checkpoint and obj["type"] == "world_state" and obj["payload"]["full"]:
            after_checkpoint = False
            continue
        after_checkpoint = False
        kept.append(raw)
    target.write_bytes(b"".join(kept))
    return dropped


def state_of(result: Reconstructed) -> tuple[object, ...]:
    """What a resumed session starts from, as one comparable value."""
    return (
        list(result.history),
        result.world_state,
        result.reference_context,
        result.previous_turn_settings,
        result.window,
    )


async def test_a_long_turn_that_compacts_again_and_again_resumes_from_its_newest_checkpoint(
    tmp_path: Path,
) -> None:
    config = Config(
        model_context_window=10_000,
        rollout=RolloutConfig(checkpoint_every_items=40, fsync_at_turn_end=False),
    )
    model = ToolLoop()
    async with open_session(tmp_path, [], config=config, tools=[Loud("loud")]) as run:
        run.session.client = model
        assert await run.session.run_turn("work through the list") == "all done"
        live = run.session
    assert run.events_of(ErrorEvent) == []
    compactions = run.events_of(ContextCompacted)
    assert len(compactions) >= 10
    assert {event.trigger for event in compactions} == {"mid_turn"}

    path = live.rollout_path
    assert path is not None
    rollout = read_rollout(path)
    assert check_rollout(rollout.lines, line_numbers=rollout.line_numbers).violations == []
    raw_lines = path.read_bytes().splitlines()
    kinds = [orjson.loads(raw) for raw in raw_lines]
    checkpoints = [
        index
        for index, obj in enumerate(kinds)
        if obj["type"] == "compacted" and CHECKPOINT_KEY in obj["payload"]
    ]
    real = [
        index
        for index, obj in enumerate(kinds)
        if obj["type"] == "compacted" and CHECKPOINT_KEY not in obj["payload"]
    ]
    assert len(real) == len(compactions)
    assert len(checkpoints) >= 3  # one turn, yet checkpoints: compactions did not reset the budget
    checkpoint_bytes = sum(len(raw_lines[i]) + len(raw_lines[i + 1]) for i in checkpoints)
    assert checkpoint_bytes * 5 <= len(path.read_bytes()) - checkpoint_bytes

    resumed = load_resume_state(path)
    # The scan stops at the newest checkpoint (or a newer compaction), never at the turn's start.
    assert resumed.stats.lines <= len(raw_lines) - checkpoints[-1]
    assert resumed.stats.lines < len(raw_lines) // 5
    assert list(resumed.history) == list(live.history.items)
    assert resumed.reference_context == live.state.reference_context
    assert resumed.window == live.window
    baseline = live.history.world_state_baseline
    assert baseline is not None
    assert resumed.world_state == baseline.to_json()

    # The same file without its checkpoints, replayed from the first line, gives the same state.
    plain = tmp_path / "plain.jsonl"
    assert strip_checkpoints(path, plain) == len(checkpoints)
    full = replay_file(plain)
    assert full.stats.lines == len(raw_lines) - 2 * len(checkpoints)
    assert state_of(full) == state_of(resumed)
    # Without checkpoints, resume reads the whole turn: every line after the session's first.
    assert load_resume_state(plain).stats.lines >= len(raw_lines) - 2 * len(checkpoints) - 3


async def test_resumes_of_a_compacting_session_start_from_its_checkpoints(tmp_path: Path) -> None:
    """Many short turns in an 8,000-token window (compactions every few dozen turns): whenever
    the newest base of the file is a checkpoint, resume reads from it and nothing older, and
    gets what a replay of the file without checkpoints gets."""
    config = Config(
        model_context_window=8_000,
        rollout=RolloutConfig(checkpoint_every_items=100, fsync_at_turn_end=False),
    )
    model = LongSessionModel(answer_words=60, tool_every=7, tool_name="sleep", tool_arguments={})
    cuts: list[bytes] = []
    async with open_session(tmp_path, [], config=config, tools=[SleepTool("sleep")]) as run:
        run.session.client = model
        for turn in range(1, 151):
            await run.session.run_turn(f"turn {turn}: " + "please go on " * 30)
            assert run.session.recorder is not None
            await run.session.recorder.flush()
            assert run.session.rollout_path is not None
            cuts.append(run.session.rollout_path.read_bytes())
    assert run.events_of(ErrorEvent) == []
    assert len(run.events_of(ContextCompacted)) >= 3

    from_checkpoint = 0
    cut_path, plain = tmp_path / "cut.jsonl", tmp_path / "plain.jsonl"
    for data in cuts:
        lines = data.splitlines()
        bases = [
            (index, CHECKPOINT_KEY.encode() in raw)
            for index, raw in enumerate(lines)
            if b'"type":"compacted"' in raw
        ]
        if not bases or not bases[-1][1]:
            continue
        from_checkpoint += 1
        cut_path.write_bytes(data)
        resumed = load_resume_state(cut_path)
        assert resumed.stats.lines == len(lines) - bases[-1][0]
        strip_checkpoints(cut_path, plain)
        full = replay_file(plain)
        assert state_of(full) == state_of(resumed)
    assert from_checkpoint >= 10
