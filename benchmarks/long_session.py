"""Benchmark P7 and long sessions (issue 11): world-state diffs, checkpoint cost, resume time.

1. **P7 — model-visible bytes of context over a 50-step session.** A real session's step
   capture runs 50 times on a small workspace where, as a tool would, every step writes one new
   file and every tenth step edits ``AGENTS.md``. "Diffs" is what the runtime sends: the full
   initial context at step 1, then ``render_diff`` of each step against the previous one.
   "Full" is the alternative of re-sending the full initial context (``render_full``) every step.
   Bytes are those of the model-visible messages (JSON). P7 = full / diffs. Goal ≥ 10×.
2. **Checkpoint cost over a 5,000-turn session.** A session with an 8,000-token window (so it
   compacts every few dozen turns), ``LongSessionModel`` answering (a tool call every 7th turn),
   and checkpoints attempted every 200 lines (``rollout.checkpoint_every_items=200``; whether one
   is written is the recorder's ratio rule). Rollout bytes with checkpoints vs the same file
   without them (the checkpoint lines removed: the model is deterministic, nothing else
   changes). Goal ≤ 1.25×. For scale, a session that never compacts (no window known; 1,000
   turns) under the ratio rule and under the previous rule (a full history copy every 200
   lines whatever its size: ``checkpoint_min_ratio=0``), which grows quadratically.
3. **Resume time at turn 5,000 vs turn 50.** The file is cut at the end of turns 27–74 and
   4,953–5,000 (two compaction cycles each); each cut is resumed (``load_resume_state`` + the
   token totals, what ``Session`` does) 3 times, best kept; the medians over the 48 cuts of each
   range are compared, so where a turn falls in its compaction cycle (the tail a resume reads
   grows from one compaction to the next) averages out. Goal ≤ 1.5×.

Prints a table and, as the final line, one JSON object with the numbers and the goals.

Run: ``uv run python benchmarks/long_session.py [--turns N] [--steps S]`` (about a minute on
two shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import orjson

from mini_codex.config import Config, RolloutConfig
from mini_codex.host import SessionOptions, open_options
from mini_codex.protocol import ResponseItem
from mini_codex.rollout.replay.checkpoint import CHECKPOINT_KEY
from mini_codex.rollout.resume import last_token_info, load_resume_state
from mini_codex.runtime.capture import capture_step
from mini_codex.runtime.context_updates import initial_context_order
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.testing import ScriptedModel
from mini_codex.testing.long_session_model import LongSessionModel
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec
from mini_codex.world_state import fragments_to_messages

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def message_bytes(items: list[ResponseItem]) -> int:
    return len(orjson.dumps([item.to_json() for item in items]))


async def p7(root: Path, steps: int) -> dict[str, float]:
    work, home = root / "p7-work", root / "p7-home"
    work.mkdir()
    home.mkdir()
    (work / "AGENTS.md").write_text("Use the project formatter.\n")
    for index in range(20):
        (work / f"src_{index}.py").write_text(f"print({index})\n")
    options = SessionOptions(cwd=work, home=home, client=ScriptedModel([]), env=ENV, persist=False)
    full_total = diff_total = 0
    async with open_options(options) as session:
        turn = session.new_turn_context()
        previous = None
        for sequence in range(1, steps + 1):
            (work / f"notes_{sequence}.md").write_text(f"step {sequence}\n")
            if sequence % 10 == 0:
                (work / "AGENTS.md").write_text(f"Use the project formatter. Rev {sequence}.\n")
            _, world_state = await capture_step(
                turn, session.capture, session.caches, sequence, mcp_runtime=session.mcp
            )
            full = fragments_to_messages(initial_context_order(world_state.render_full()))
            full_total += message_bytes(full)
            if previous is None:
                diff_total += message_bytes(full)
            else:
                diff_total += message_bytes(
                    fragments_to_messages(world_state.render_diff(previous))
                )
            previous = world_state
    return {"full_bytes": full_total, "diff_bytes": diff_total, "p7": full_total / diff_total}


class NoopTool:
    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="noop",
            description="Does nothing.",
            kind="function",
            parameters={"type": "object", "properties": {}},
        )

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(text="ok", success=True)


FIRST = range(27, 75)
"""Cuts around turn 50; as many after the last turn: two compaction cycles each."""


async def long_run(
    root: Path, turns: int, ratio: float = 5.0, window: int | None = 8_000
) -> tuple[Path, dict[int, int], dict[str, int]]:
    """Run the session; returns the rollout, the file size after selected turns, counters."""
    work, home = root / "work", root / "home"
    work.mkdir()
    home.mkdir()
    last = range(max(turns - len(FIRST) + 1, FIRST.stop), turns + 1)
    config = Config(
        model="long-session-model",  # no built-in window: only model_context_window sets one
        model_context_window=window,
        rollout=RolloutConfig(
            checkpoint_every_items=200, checkpoint_min_ratio=ratio, fsync_at_turn_end=False
        ),
    )
    model = LongSessionModel(answer_words=60, tool_every=7, tool_name="noop", tool_arguments={})
    compactions = 0

    def count(event: object) -> None:
        nonlocal compactions
        compactions += getattr(event, "type", "") == "context_compacted"

    options = SessionOptions(
        cwd=work,
        home=home,
        client=model,
        config=config,
        env=ENV,
        tools=[RegisteredTool(NoopTool())],
        on_event=count,
    )
    sizes: dict[int, int] = {}
    async with open_options(options) as session:
        for number in range(1, turns + 1):
            await session.run_turn(f"turn {number}: " + "please go on " * 30)
            if number in FIRST or number in last:
                assert session.recorder is not None
                assert session.rollout_path is not None
                await session.recorder.flush()
                sizes[number] = session.rollout_path.stat().st_size
        path = session.rollout_path
    assert path is not None
    return path, sizes, {"requests": model.requests, "compactions": compactions}


def checkpoint_bytes(path: Path) -> tuple[int, int]:
    """(bytes of checkpoint lines — the ``compacted`` line and its full ``world_state`` —,
    number of checkpoints)."""
    total = count = 0
    after_checkpoint = False
    with path.open("rb") as handle:
        for raw in handle:
            obj = orjson.loads(raw)
            kind = obj.get("type")
            if kind == "compacted" and CHECKPOINT_KEY in obj.get("payload", {}):
                total += len(raw)
                count += 1
                after_checkpoint = True
                continue
            if after_checkpoint and kind == "world_state" and obj["payload"].get("full"):
                total += len(raw)
            after_checkpoint = False
    return total, count


def resume_seconds(source: Path, size: int, scratch: Path) -> float:
    """Best of 3 resumes of the first ``size`` bytes of ``source`` (the file as it was then)."""
    with source.open("rb") as src, scratch.open("wb") as dst:
        remaining = size
        while remaining:
            chunk = src.read(min(remaining, 1 << 20))
            dst.write(chunk)
            remaining -= len(chunk)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        load_resume_state(scratch)
        last_token_info(scratch)
        best = min(best, time.perf_counter() - started)
    return best


async def main(turns: int, steps: int, uncompacted: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        visible = await p7(root, steps)
        started = time.perf_counter()
        path, sizes, counters = await long_run(root, turns)
        run_s = time.perf_counter() - started
        total = path.stat().st_size
        checkpoints, checkpoint_count = checkpoint_bytes(path)
        scratch = root / "cut.jsonl"
        early = [resume_seconds(path, sizes[n], scratch) for n in sorted(sizes) if n in FIRST]
        late = [resume_seconds(path, sizes[n], scratch) for n in sorted(sizes) if n not in FIRST]
        # Without compaction (no window known), history is the whole file: the ratio rule
        # writes no checkpoint, the previous rule (a full copy every 200 lines) one per 200.
        plain = {}
        for name, ratio in (("ratio_rule", 5.0), ("unbounded_rule", 0.0)):
            (root / name).mkdir()
            plain_path, _, _ = await long_run(root / name, uncompacted, ratio=ratio, window=None)
            plain_total = plain_path.stat().st_size
            extra, count = checkpoint_bytes(plain_path)
            plain[f"no_compaction_{name}_checkpoints"] = count
            plain[f"no_compaction_{name}_bytes_ratio"] = round(
                plain_total / (plain_total - extra), 3
            )
            plain_path.unlink()
    early_ms = statistics.median(early) * 1000
    late_ms = statistics.median(late) * 1000
    return {
        "p7_visible_bytes_ratio": round(visible["p7"], 1),
        "p7_full_bytes": visible["full_bytes"],
        "p7_diff_bytes": visible["diff_bytes"],
        "p7_steps": steps,
        "turns": turns,
        "requests": counters["requests"],
        "compactions": counters["compactions"],
        "checkpoints": checkpoint_count,
        "rollout_bytes": total,
        "rollout_bytes_without_checkpoints": total - checkpoints,
        "checkpoint_bytes_ratio": round(total / (total - checkpoints), 4),
        "no_compaction_turns": uncompacted,
        **plain,
        "resume_ms_turn_50": round(early_ms, 3),
        f"resume_ms_turn_{turns}": round(late_ms, 3),
        "resume_ratio": round(late_ms / early_ms, 3),
        "session_seconds": round(run_s, 1),
        "goals": {
            "p7_visible_bytes_ratio": ">= 10",
            "checkpoint_bytes_ratio": "<= 1.25",
            "resume_ratio": "<= 1.5",
        },
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=5_000)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--uncompacted-turns", type=int, default=1_000)
    args = parser.parse_args()
    result = anyio.run(main, args.turns, args.steps, args.uncompacted_turns)
    for key, value in result.items():
        if key != "goals":
            print(f"{key:36} {value}", file=sys.stderr)
    print(json.dumps(result))
