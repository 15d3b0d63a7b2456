"""A 500-turn session in an 8,000-token window (spec/codex-runtime.md §8): compaction keeps every
request under the window, no turn fails on context length, and resuming reads a bounded tail
whatever the turn count (checked by lines read, history size and peak memory, not by time)."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest
from runtime_harness import SleepTool, open_session

from mini_codex.config import Config
from mini_codex.models.base import Prompt
from mini_codex.models.tokens import estimate_prompt_tokens
from mini_codex.protocol.session_events import ContextCompacted, ErrorEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.rollout.resume import load_resume_state, replay_file
from mini_codex.testing.long_session_model import LongSessionModel

pytestmark = pytest.mark.anyio

WINDOW = 8_000
TURNS = 500


def resume_cost(path: Path) -> tuple[int, int, int]:
    """(lines read, history items, peak bytes allocated) of resuming ``path``."""
    tracemalloc.start()
    try:
        state = load_resume_state(path)
        items = len(list(state.history))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return state.stats.lines, items, peak


async def test_500_turns_in_a_small_window_never_overflow_and_resume_stays_bounded(
    tmp_path: Path,
) -> None:
    config = Config(model_context_window=WINDOW)
    sizes: list[int] = []

    def measure(prompt: Prompt) -> None:
        sizes.append(estimate_prompt_tokens(prompt))

    model = LongSessionModel(answer_words=60, tool_every=7, tool_name="sleep", tool_arguments={})
    copies: dict[int, Path] = {}
    async with open_session(tmp_path, [], config=config, tools=[SleepTool("sleep")]) as run:
        run.session.client = model
        run.session.on_request = measure
        for turn in range(1, TURNS + 1):
            answer = await run.session.run_turn(f"turn {turn}: " + "please go on " * 30)
            assert answer is not None, turn
            assert answer.startswith("answer #"), turn
            if turn in (100, 250, TURNS):
                assert run.session.recorder is not None
                await run.session.recorder.flush()
                assert run.session.rollout_path is not None
                copies[turn] = tmp_path / f"at-{turn}.jsonl"
                shutil.copyfile(run.session.rollout_path, copies[turn])
    assert run.events_of(ErrorEvent) == []
    compactions = run.events_of(ContextCompacted)
    assert len(compactions) >= 10
    assert {event.trigger for event in compactions} == {"pre_turn", "mid_turn"}
    assert len(sizes) == model.requests
    assert max(sizes) < WINDOW

    path = run.session.rollout_path
    assert path is not None
    rollout = read_rollout(path)
    assert check_rollout(rollout.lines, line_numbers=rollout.line_numbers).violations == []
    assert list(replay_file(path).history) == list(run.session.history.items)
    costs = {turn: resume_cost(copy) for turn, copy in copies.items()}

    _, items_100, peak_100 = costs[100]
    lines_500, items_500, peak_500 = costs[TURNS]
    assert rollout.stats.lines > 10 * lines_500  # resume reads a small tail of the file
    bound_lines = max(lines for lines, _, _ in costs.values())
    assert lines_500 <= bound_lines <= 3 * min(lines for lines, _, _ in costs.values()) + 200
    assert items_500 <= 2 * items_100 + 50
    assert peak_500 <= 2 * peak_100 + 512 * 1024
