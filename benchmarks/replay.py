"""Benchmarks P2, P3 and P4 (DESIGN §9): replay throughput, O(tail) resume, rollout size.

(a) **P2 replay throughput.** A 1M-line rollout of realistic lines (turns of a user message,
    ``world_state`` patches, ``turn_context``, reasoning, shell ``function_call`` /
    ``function_call_output`` pairs, ``token_count`` events and an assistant answer; no
    compactions, no checkpoints) is replayed whole with ``replay_file`` (what ``mini-codex
    rollout replay`` runs: every line read, decoded and folded — the common kinds by typed
    msgspec decoders that parse and exact-check a line in C, the rest with orjson; surviving
    history items are built as typed items lazily, on first read) and compared with a bare
    ``orjson.loads`` of every line of the same file (forward, line by line):
    ``replay_vs_orjson = orjson time / replay time`` (target ≥ 0.5), best of ``--p2-rounds``
    (5) interleaved rounds, each round's ratio printed too. One replay runs before timing: it
    builds the typed decoders, a one-time cost of about 20 ms per process. For context, the
    typed forward path (``read_rollout`` + ``reconstruct``, pydantic models for every line) is
    timed on the first 100k lines.
(b) **P3 resume.** A 1M-line rollout of the same turns written the way a long session writes
    it: a checkpoint (``checkpoint_payload`` → ``compacted`` + full ``world_state``, exactly
    what ``RolloutRecorder.write_checkpoint`` appends) at the first turn end after every 2000
    lines, and a model compaction (``compacted`` with a replacement history, full
    ``world_state``, ``turn_context``) every 6000 lines, which is what keeps the model-visible
    history (and so each checkpoint) bounded. A 10k-line file holds the same ``session_meta``
    and the same last lines. ``load_resume_state`` is timed on both (best of several runs):
    ``resume_1m_vs_10k`` (target ≤ 1.5); both must reconstruct the same state. The peak RSS of
    resuming the 1M file is measured in a fresh subprocess (``ru_maxrss``), next to the RSS of
    the same subprocess before resuming (``VmHWM``).
(c) **P4 size.** A 10k-file workspace (``WorkspaceFiles`` in the real ``WorkspaceSection`` of a
    ``WorldState``), 100 steps, one file added or removed per step: rollout bytes of one full
    ``world_state`` line plus 99 patch lines (``WorldStateSnapshot.merge_patch_from``) vs a full
    ``world_state`` line every step: ``size_ratio`` (target ≥ 50).

Files are written with orjson directly (not through the async recorder, which would take minutes
for 1M lines); only checkpoint payloads go through ``checkpoint_payload``. Prints a table and,
as the final line, one JSON object.

Run: ``uv run python benchmarks/replay.py [--lines N] [--tail-lines N] [--dir DIR]``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from mini_codex.jsonmerge import JsonObject, apply_merge_patch
from mini_codex.protocol import ResponseItem, TurnContextItem
from mini_codex.protocol.items import RESPONSE_ITEMS_ADAPTER
from mini_codex.rollout import (
    PreviousTurnSettings,
    Reconstructed,
    WindowInfo,
    checkpoint_payload,
    load_resume_state,
    read_rollout,
    reconstruct,
    replay_file,
)
from mini_codex.rollout.paths import new_thread_id
from mini_codex.world_state import WorldState
from mini_codex.world_state.sections import WorkspaceSection
from mini_codex.world_state.workspace_files import WorkspaceFiles

CHECKPOINT_EVERY = 2000
"""``RecorderOptions.checkpoint_every_items`` default."""
COMPACT_EVERY = 6000
"""Lines between model compactions in the checkpointed file (≈ one large context window)."""
SESSION_ID = new_thread_id(1_788_000_000_000, bytes(range(10)))


# --- generating sessions ------------------------------------------------------------------------


class SessionWriter:
    """Writes realistic rollout lines with orjson; keeps the model-visible history as JSON."""

    def __init__(self, out: BinaryIO, *, seed: int = 7, keep_tail: int = 0) -> None:
        self.out = out
        self.rng = random.Random(seed)
        self.lines = 0
        self.ms = 0
        self.tail: collections.deque[bytes] = collections.deque(maxlen=keep_tail or None)
        self.keep_tail = keep_tail
        self.history: list[dict[str, Any]] = []
        self.typed: list[ResponseItem] = []  # validated prefix of ``history`` (checkpoints)
        self.baseline: JsonObject | None = None
        self.context: dict[str, Any] | None = None
        self.turn = 0
        self.since_compaction = 0  # lines since the last compacted line (checkpoint counter)
        self.since_model_compaction = 0
        self.window = 0
        self.window_ids = [new_thread_id(1_788_000_000_000, bytes([0, *range(9)]))]
        self.workspace = {f"src/module_{index:03d}.py": 1 for index in range(200)}
        self.meta_line = b""

    def emit(self, kind: bytes, payload: Any) -> None:
        self.ms += 1
        seconds, millis = divmod(self.ms, 1000)
        minutes, seconds = divmod(seconds, 60)
        hours, minutes = divmod(minutes, 60)
        stamp = f"2026-08-{22 + hours // 24:02d}T{hours % 24:02d}:{minutes:02d}:{seconds:02d}."
        line = (
            b'{"timestamp":"'
            + stamp.encode()
            + f"{millis:03d}Z".encode()
            + b'","type":"'
            + kind
            + b'","payload":'
            + orjson.dumps(payload)
            + b"}\n"
        )
        self.out.write(line)
        if self.keep_tail:
            self.tail.append(line)
        self.lines += 1
        if kind == b"compacted":
            self.since_compaction = 0
        else:
            self.since_compaction += 1
        self.since_model_compaction += 1
        if kind == b"session_meta":
            self.meta_line = line

    def item(self, payload: dict[str, Any]) -> None:
        self.history.append(payload)
        self.emit(b"response_item", payload)

    def session_meta(self) -> None:
        self.emit(
            b"session_meta",
            {
                "id": SESSION_ID,
                "timestamp": "2026-08-22T00:00:00.000Z",
                "cwd": "/repo",
                "originator": "mini_codex",
                "cli_version": "0.1.0",
                "model_provider": "openai",
                "context_window": {"window_id": self.window_ids[0]},
                "mini_codex_schema": 1,
            },
        )

    def world_state(self, state: JsonObject, *, full: bool) -> None:
        if full:
            self.baseline = state
        else:
            assert self.baseline is not None
            patched = apply_merge_patch(self.baseline, state)
            assert isinstance(patched, dict)
            self.baseline = patched
        self.emit(b"world_state", {"full": full, "state": state})

    def full_state(self) -> JsonObject:
        return {
            "environments": {
                "environments": {"local": {"cwd": "/repo", "shell": "bash", "status": "available"}},
                "current_date": f"2026-08-{22 + self.turn // 5000:02d}",
            },
            "permissions": {"sandbox": "workspace-write", "approval": "on-request"},
            "workspace": {
                "root": "/repo",
                "count": len(self.workspace),
                "digest": f"{self.turn:016x}",
                "files": dict(self.workspace),
            },
        }

    def turn_context(self, turn_id: str) -> None:
        self.context = {
            "turn_id": turn_id,
            "cwd": "/repo",
            "current_date": "2026-08-22",
            "timezone": "Europe/Berlin",
            "approval_policy": "on-request",
            "sandbox_policy": {
                "type": "workspace-write",
                "writable_roots": ["/repo"],
                "network_access": False,
            },
            "model": "gpt-5-codex",
            "effort": "medium",
            "summary": "auto",
        }
        self.emit(b"turn_context", self.context)

    def workspace_patch(self) -> JsonObject:
        added = f"src/generated/file_{self.turn:07d}.py"
        removed = f"src/generated/file_{self.turn - 1:07d}.py"
        files: dict[str, Any] = {added: 1}
        self.workspace[added] = 1
        if self.workspace.pop(removed, None) is not None:
            files[removed] = None
        return {"workspace": {"digest": f"{self.turn:016x}", "files": files}}

    def one_turn(self) -> None:
        rng = self.rng
        self.turn += 1
        turn_id = f"turn-{self.turn:07d}"
        text = f"Please fix the failing test number {self.turn} in tests/test_module.py"
        self.emit(b"event_msg", {"type": "task_started", "turn_id": turn_id})
        self.item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        )
        self.emit(b"event_msg", {"type": "user_message", "message": text})
        if self.baseline is None:
            self.world_state(self.full_state(), full=True)
        else:
            date = f"2026-08-{22 + self.turn // 5000:02d}"
            self.world_state({"environments": {"current_date": date}}, full=False)
        self.turn_context(turn_id)
        for step in range(rng.randint(1, 6)):
            if step and rng.random() < 0.3:
                self.world_state(self.workspace_patch(), full=False)
            self.item(
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": "**Inspecting the test**"}],
                    "content": None,
                    "encrypted_content": "gAAAAAB" + "x" * rng.randint(100, 400),
                }
            )
            call_id = f"call_{self.turn}_{step}"
            command = ["bash", "-lc", f"rg -n 'def test_' tests/ | head -{step + 5}"]
            self.item(
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": orjson.dumps({"command": command, "workdir": "/repo"}).decode(),
                    "call_id": call_id,
                }
            )
            output = "tests/test_module.py:12: def test_something():\n" * rng.randint(1, 12)
            self.item({"type": "function_call_output", "call_id": call_id, "output": output})
            self.emit(
                b"event_msg",
                {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": {"input_tokens": 1200 * step, "total_tokens": 1300},
                        "model_context_window": 272000,
                    },
                    "rate_limits": None,
                },
            )
        answer = f"Fixed test {self.turn}: the fixture now resets state between runs."
        self.item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer}],
            }
        )
        self.emit(b"event_msg", {"type": "agent_message", "message": answer})
        self.emit(
            b"event_msg",
            {"type": "task_complete", "turn_id": turn_id, "last_agent_message": answer},
        )

    # --- checkpoints and compactions ------------------------------------------------------------

    def window_info(self) -> WindowInfo:
        previous = self.window_ids[-2] if len(self.window_ids) > 1 else None
        return WindowInfo(self.window, self.window_ids[0], previous, self.window_ids[-1])

    def checkpoint(self) -> None:
        """What ``RolloutRecorder.write_checkpoint`` appends: checkpoint, then a full state."""
        new = self.history[len(self.typed) :]
        if new:
            self.typed.extend(RESPONSE_ITEMS_ADAPTER.validate_python(new))
        assert self.context is not None
        assert self.baseline is not None
        context = TurnContextItem.model_validate(self.context)
        settings = PreviousTurnSettings(context.model, None, None)
        payload = checkpoint_payload(self.typed, context, settings, self.window_info())
        self.emit(b"compacted", payload.to_json())
        self.emit(b"world_state", {"full": True, "state": self.baseline})

    def model_compaction(self) -> None:
        """A compaction with re-injection: compacted, full world_state, turn_context (I5)."""
        users = [item for item in self.history if item.get("role") == "user"][-5:]
        summary = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": f"Summary of turns up to {self.turn}."}],
        }
        replacement = [*users, summary]
        self.window += 1
        ms = 1_788_000_000_000 + self.window
        self.window_ids.append(new_thread_id(ms, bytes([1, *range(9)])))
        self.emit(
            b"compacted",
            {
                "message": f"Summary of turns up to {self.turn}.",
                "replacement_history": replacement,
                "window_number": self.window,
                "first_window_id": self.window_ids[0],
                "previous_window_id": self.window_ids[-2],
                "window_id": self.window_ids[-1],
            },
        )
        self.history = list(replacement)
        self.typed = []
        self.since_model_compaction = 0
        self.world_state(self.full_state(), full=True)
        assert self.context is not None
        self.emit(b"turn_context", self.context)


def write_plain(path: Path, lines: int) -> int:
    """(a): turns only."""
    with path.open("wb", buffering=1 << 20) as out:
        writer = SessionWriter(out)
        writer.session_meta()
        while writer.lines < lines:
            writer.one_turn()
    return writer.lines


def write_checkpointed(path: Path, lines: int, tail_path: Path, tail_lines: int) -> int:
    """(b): turns with checkpoints and model compactions; ``tail_path`` gets the same tail."""
    with path.open("wb", buffering=1 << 20) as out:
        writer = SessionWriter(out, keep_tail=tail_lines - 1)
        writer.session_meta()
        while writer.lines < lines:
            writer.one_turn()
            if writer.since_model_compaction >= COMPACT_EVERY:
                writer.model_compaction()
            elif writer.since_compaction >= CHECKPOINT_EVERY:
                writer.checkpoint()
    tail_path.write_bytes(writer.meta_line + b"".join(writer.tail))
    return writer.lines


# --- measuring ----------------------------------------------------------------------------------


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def parse_all(path: Path) -> int:
    count = 0
    with path.open("rb") as handle:
        for raw in handle:
            orjson.loads(raw)
            count += 1
    return count


def head(path: Path, target: Path, lines: int) -> Path:
    with path.open("rb") as source, target.open("wb") as out:
        for number, raw in enumerate(source):
            if number >= lines:
                break
            out.write(raw)
    return target


RSS_SCRIPT = """
import sys
from mini_codex.rollout import load_resume_state

def hwm_kb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise SystemExit("no VmHWM in /proc/self/status")

before = hwm_kb()
state = load_resume_state(sys.argv[1])
print(before, hwm_kb(), len(state.history))
"""


def resume_rss_mb(path: Path) -> tuple[float, float]:
    """(peak RSS before resuming, peak RSS after resuming) of a fresh interpreter, in MB.

    ``VmHWM`` (the high-water mark of this process image) rather than ``ru_maxrss``: on Linux the
    latter also counts the memory of the parent the child was forked from.
    """
    done = subprocess.run(
        [sys.executable, "-c", RSS_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    before, after, _ = done.stdout.split()
    return int(before) / 1024, int(after) / 1024


def same_state(a: Reconstructed, b: Reconstructed) -> bool:
    return (a.history, a.world_state, a.reference_context, a.previous_turn_settings, a.window) == (
        b.history,
        b.world_state,
        b.reference_context,
        b.previous_turn_settings,
        b.window,
    )


def size_chain(files: int, steps: int) -> tuple[int, int, int]:
    """(c): (full+patch chain bytes, full-every-step bytes, one full line bytes)."""
    paths = [f"src/pkg_{index // 100:03d}/module_{index % 100:02d}.py" for index in range(files)]
    current = WorkspaceFiles("/repo", paths)
    previous_snapshot = None
    chain = every = full_line = 0
    stamp = b'{"timestamp":"2026-08-22T00:00:00.000Z","type":"world_state","payload":'
    rng = random.Random(3)
    for step in range(steps):
        if step:
            if step % 2:
                current = current.with_changes(added=[f"src/pkg_new/step_{step:03d}.py"])
            else:
                current = current.with_changes(removed=[rng.choice(paths)])
        snapshot = WorldState([WorkspaceSection(current)]).snapshot()
        full = len(stamp + orjson.dumps({"full": True, "state": snapshot.to_json()}) + b"}\n")
        every += full
        if previous_snapshot is None:
            chain += full
            full_line = full
        else:
            patch = snapshot.merge_patch_from(previous_snapshot)
            assert patch is not None, "every step changes one file"
            chain += len(stamp + orjson.dumps({"full": False, "state": patch}) + b"}\n")
        previous_snapshot = snapshot
    return chain, every, full_line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--tail-lines", type=int, default=10_000)
    parser.add_argument("--typed-lines", type=int, default=100_000)
    parser.add_argument("--resume-runs", type=int, default=9)
    parser.add_argument("--p2-rounds", type=int, default=5, help="interleaved P2 rounds (best of)")
    parser.add_argument("--dir", default=None, help="where to write the files (default: temp)")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mini-codex-replay-", dir=args.dir) as tmp:
        base = Path(tmp)
        # (a) replay throughput
        plain = base / "plain-1m.jsonl"
        gen_plain, plain_lines = timed(lambda: write_plain(plain, args.lines))
        raw_times, replay_times = [], []
        replayed: Reconstructed | None = None
        replay_file(plain)  # builds the typed decoders once, like any first replay in a process
        for _ in range(args.p2_rounds):  # interleaved, best of N: the machine is shared
            raw_times.append(timed(lambda: parse_all(plain))[0])
            seconds, replayed = timed(lambda: replay_file(plain))
            replay_times.append(seconds)
        assert replayed is not None
        assert replayed.stats.lines == plain_lines
        raw_s, replay_s = min(raw_times), min(replay_times)
        small = head(plain, base / "plain-head.jsonl", args.typed_lines)
        raw_small = min(timed(lambda: parse_all(small))[0] for _ in range(2))

        def typed_forward() -> Reconstructed:
            read = read_rollout(small)
            return reconstruct(read.lines, read.stats)

        typed_s, typed_result = timed(typed_forward)
        assert typed_result.history == replay_file(small).history
        plain_mb = plain.stat().st_size / 1e6
        plain.unlink()

        # (b) resume
        big = base / "checkpointed-1m.jsonl"
        tail = base / "checkpointed-10k.jsonl"
        gen_big, big_lines = timed(
            lambda: write_checkpointed(big, args.lines, tail, args.tail_lines)
        )
        tail_lines = sum(1 for _ in tail.open("rb"))
        big_state = load_resume_state(big)
        tail_state = load_resume_state(tail)
        assert same_state(big_state, tail_state), "same tail, same resume state"
        assert same_state(tail_state, replay_file(tail)), "resume equals a whole-file replay"
        big_runs, tail_runs = [], []
        for _ in range(args.resume_runs):
            big_runs.append(timed(lambda: load_resume_state(big))[0])
            tail_runs.append(timed(lambda: load_resume_state(tail))[0])
        # Best of N: the machine is shared, and both files need the same work (same lines read).
        resume_big, resume_tail = min(big_runs), min(tail_runs)
        rss_before, rss_peak = resume_rss_mb(big)
        big_mb = big.stat().st_size / 1e6

    # (c) size
    chain, every, full_line = size_chain(10_000, 100)
    elapsed = time.perf_counter() - started

    replay_ratio = raw_s / replay_s
    rounds = [round(raw / replay, 3) for raw, replay in zip(raw_times, replay_times, strict=True)]
    resume_ratio = resume_big / resume_tail
    size_ratio = every / chain
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"generated {plain_lines} lines ({plain_mb:.0f} MB) in {gen_plain:.1f} s and "
        f"{big_lines} checkpointed lines ({big_mb:.0f} MB) in {gen_big:.1f} s"
    )
    rows = [
        (
            f"P2 orjson.loads of every line, {plain_lines} lines (s, best of {args.p2_rounds})",
            f"{raw_s:.2f}",
        ),
        (f"P2 replay_file (whole-file replay), {plain_lines} lines (s)", f"{replay_s:.2f}"),
        ("P2 replay throughput (lines/s)", f"{plain_lines / replay_s:,.0f}"),
        ("P2 replay_vs_orjson (target >= 0.5)", f"{replay_ratio:.3f}"),
        ("    ratio of each round (best replay vs best orjson above)", " ".join(map(str, rounds))),
        (
            f"    typed path read_rollout+reconstruct, {args.typed_lines} lines: vs orjson",
            f"{raw_small / typed_s:.3f}",
        ),
        (
            f"P3 load_resume_state, {big_lines}-line file (ms, best of {args.resume_runs})",
            f"{resume_big * 1000:.1f}",
        ),
        (
            f"P3 load_resume_state, {tail_lines}-line file, same tail (ms)",
            f"{resume_tail * 1000:.1f}",
        ),
        ("P3 lines the resume reads (of either file)", f"{big_state.stats.lines}"),
        ("P3 resume_1m_vs_10k (target <= 1.5)", f"{resume_ratio:.2f}"),
        (
            f"P3 peak RSS resuming the {big_lines}-line file (MB; before resuming)",
            f"{rss_peak:.0f} ({rss_before:.0f})",
        ),
        ("P4 full+patch chain, 100 steps, 10k files (bytes)", f"{chain:,}"),
        ("P4 full snapshot every step (bytes)", f"{every:,}"),
        ("P4 size_ratio (target >= 50)", f"{size_ratio:.1f}"),
    ]
    for label, value in rows:
        print(f"{label:<72} {value:>14}")
    print(f"total {elapsed:.0f} s")
    result = {
        "lines": plain_lines,
        "orjson_s": round(raw_s, 3),
        "replay_s": round(replay_s, 3),
        "replay_vs_orjson": round(replay_ratio, 3),
        "replay_vs_orjson_rounds": rounds,
        "replay_vs_orjson_median_round": statistics.median(rounds),
        "typed_forward_lines": min(args.typed_lines, plain_lines),
        "typed_forward_vs_orjson": round(raw_small / typed_s, 3),
        "resume_1m_ms": round(resume_big * 1000, 2),
        "resume_10k_ms": round(resume_tail * 1000, 2),
        "resume_1m_vs_10k": round(resume_ratio, 3),
        "resume_lines_read": big_state.stats.lines,
        "resume_1m_peak_rss_mb": round(rss_peak, 1),
        "interpreter_rss_mb": round(rss_before, 1),
        "chain_bytes": chain,
        "full_every_step_bytes": every,
        "full_snapshot_bytes": full_line,
        "size_ratio": round(size_ratio, 1),
        "targets": {"replay_vs_orjson": 0.5, "resume_1m_vs_10k": 1.5, "size_ratio": 50},
        "elapsed_s": round(elapsed, 1),
    }
    print(json.dumps(result))
    met = replay_ratio >= 0.5 and resume_ratio <= 1.5 and size_ratio >= 50
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
