"""Benchmark: the interactive UI's launch time and streaming render throughput (issue 15).

1. **Launch → ready composer.** The real ``mini-codex`` (scripted model) is started in a tmux
   terminal (inline mode, 100×30); the time until the composer's placeholder is on the screen is
   measured RUNS times (median reported). Goal: ≤ 0.35 s (issue 30; it was 1.5 s in issue 15).
   The package and site-packages are compiled first (``bytecode.py``), as an installed CLI has
   its ``.pyc`` files; the load average is printed with the figures. Also reported: the time
   until the session is open (the status line shows it; a prompt sent before is sent then): the
   UI paints its composer first and imports the session runtime after its first frame.
   ``--baseline PATH`` launches another ``mini-codex`` script (say, one of a checkout of ``main``)
   the same way, alternately with this one, so that a busy machine slows both alike.
2. **Streaming render throughput.** A headless app (80×24) receives ``agent_message_delta`` events
   at RATE deltas/s (one token of ~4 characters each) for SECONDS seconds, paced by the clock, in
   the same event loop as the UI (so a UI that cannot keep up slows the producer down). Reported:
   the rate achieved and the lag between the last delta and the screen showing the whole text.
   Goal: keeps up with 2,000 deltas/s (achieved ≥ 95 %), lag < 50 ms.
3. **Live output tail.** The same headless app gets a shell call and its output as
   ``exec_command_output_delta`` events at the runtime's ceiling (20 events/s of 8 KiB each, one
   call) for SECONDS seconds. Reported: the lag between the last event and the cell showing the
   last line. Goal: < 50 ms (the tail's cost is bounded by its 8 lines, not by the output).

Prints a table and, as the final line, one JSON object with the numbers and the goals.

Run: ``uv run python benchmarks/ui_latency.py [--runs N] [--rate R] [--seconds S]
[--baseline PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from bytecode import ensure_bytecode
from mini_codex.host import Session, SessionOptions, open_options
from mini_codex.mcp.elicitation import ElicitationHandler
from mini_codex.protocol.session_events import (
    AgentMessageDelta,
    ExecCommandOutputDelta,
    SessionEvent,
    ToolCallBegin,
)
from mini_codex.runtime.approvals import ApprovalCallback
from mini_codex.testing import ScriptedModel
from mini_codex.tui.app import MiniCodexApp
from mini_codex.tui.run import build_app, ui_harness

MINI_CODEX = Path(sys.executable).parent / "mini-codex"
LAUNCH_GOAL_S = 0.35
READY_TEXT = "Ask mini-codex"
SESSION_TEXT = "approvals "
"""The status line names the approval policy once the session is open."""


def launch_once(tmp: Path, index: int, executable: Path = MINI_CODEX) -> tuple[float, float]:
    socket = f"mini-codex-bench-{os.getpid()}-{index}"
    work, home = tmp / f"work{index}", tmp / f"home{index}"
    work.mkdir()
    home.mkdir()
    script = tmp / "one.jsonl"
    script.write_text('{"output": [{"type": "message", "content": "hi"}]}\n')
    command = (
        f"cd {work} && env MINI_CODEX_HOME={home} TERM=xterm-256color "
        f"{executable} -m scripted:{script}; sleep 5"
    )
    tmux = ["tmux", "-L", socket]
    start = time.perf_counter()
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "b", "-x", "100", "-y", "30", command], check=True
    )
    ready: float | None = None
    try:
        while time.perf_counter() - start < 20:
            screen = subprocess.run(
                [*tmux, "capture-pane", "-p", "-t", "b"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            if ready is None and READY_TEXT in screen:
                ready = time.perf_counter() - start
            if ready is not None and SESSION_TEXT in screen:
                return ready, time.perf_counter() - start
            time.sleep(0.01)
        raise RuntimeError("the UI never showed its composer and an open session")
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)


def headless_app(tmp: Path, name: str) -> MiniCodexApp:
    """The UI on a real (unpersisted) session with a model that is never asked."""
    work, home = tmp / f"{name}-work", tmp / f"{name}-home"
    work.mkdir()
    home.mkdir()

    @asynccontextmanager
    async def opener(
        resume: Path | None,
        callback: ApprovalCallback,
        on_event: Callable[[SessionEvent], None],
        *,
        elicitation_callback: ElicitationHandler | None = None,
    ) -> AsyncIterator[Session]:
        options = SessionOptions(
            cwd=work, home=home, client=ScriptedModel([]), on_event=on_event, persist=False
        )
        async with open_options(options) as session:
            yield session

    return build_app(opener, target=None, home=None)


async def stream_once(tmp: Path, rate: int, seconds: float) -> dict[str, float]:
    app = headless_app(tmp, "stream")
    total = int(rate * seconds)
    tokens = [f"w{i % 10} " if i % 17 else "\n\n" for i in range(total)]
    expected = "".join(tokens)
    async with ui_harness(app, size=(80, 24)) as pilot:
        while app.session is None:
            await pilot.pause(0.01)
        start = time.perf_counter()
        sent = 0
        last_sent = start
        while sent < total:
            due = min(total, int((time.perf_counter() - start) * rate) + 1)
            for token in tokens[sent:due]:
                app.on_session_event(AgentMessageDelta(delta=token))
            sent = due
            last_sent = time.perf_counter()
            await anyio.sleep(0.005)
        elapsed = last_sent - start
        waited = time.perf_counter()
        while True:
            if time.perf_counter() - waited > 10:
                raise RuntimeError("the transcript never showed the whole streamed text")
            stream = app.transcript.stream
            shown = stream.source.rstrip() if stream is not None else ""
            if shown == expected.rstrip() and app.transcript.last_render >= last_sent:
                break
            await pilot.pause(0.001)
        lag = app.transcript.last_render - last_sent
    return {"deltas": total, "achieved_rate": total / elapsed, "lag_ms": lag * 1000}


async def tail_once(tmp: Path, seconds: float) -> dict[str, float]:
    app = headless_app(tmp, "tail")
    rate, size = 20, 8 * 1024
    total = int(rate * seconds)
    line = "x" * 99 + "\n"
    async with ui_harness(app, size=(80, 24)) as pilot:
        while app.session is None:
            await pilot.pause(0.01)
        payload = json.dumps({"command": "yes x | head -c 100000000"})
        app.on_session_event(
            ToolCallBegin(call_id="c1", name="shell", step_id="s", payload=payload)
        )
        start = time.perf_counter()
        body = (line * (size // len(line)))[:-12]
        for index in range(total):
            await anyio.sleep(max(0.0, start + index / rate - time.perf_counter()))
            chunk = f"{body}chunk{index:05d}.\n".encode()
            app.on_session_event(ExecCommandOutputDelta.of("c1", chunk))
        last_sent = time.perf_counter()
        marker = f"chunk{total - 1:05d}."
        while True:
            if time.perf_counter() - last_sent > 10:
                raise RuntimeError("the tool cell never showed the last output line")
            cell = app.transcript.tool_cells.get("c1")
            if cell is not None and marker in str(cell.content):
                break
            await pilot.pause(0.001)
        lag = time.perf_counter() - last_sent
    return {"events": total, "bytes": total * size, "lag_ms": lag * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--baseline", type=Path, default=None, help="another mini-codex script")
    args = parser.parse_args()
    condition = ensure_bytecode()
    tmp = Path(tempfile.mkdtemp(prefix="mini-codex-ui-bench-"))
    try:
        both, baseline = [], []
        for i in range(args.runs):
            both.append(launch_once(tmp, i))
            if args.baseline is not None:
                baseline.append(launch_once(tmp, args.runs + i, args.baseline))
        launches = [ready for ready, _ in both]
        sessions = [opened for _, opened in both]
        streamed = anyio.run(stream_once, tmp, args.rate, args.seconds)
        tailed = anyio.run(tail_once, tmp, args.seconds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    launch = statistics.median(launches)
    print(f"{condition}; load average {os.getloadavg()[0]:.1f}")
    print(f"launch → ready composer: median {launch:.3f} s over {args.runs} runs {launches}")
    print(f"launch → session open (status line): median {statistics.median(sessions):.3f} s")
    if baseline:
        print(
            f"baseline {args.baseline}: ready composer median "
            f"{statistics.median(r for r, _ in baseline):.3f} s, session open median "
            f"{statistics.median(o for _, o in baseline):.3f} s"
        )
    print(
        f"streaming: {streamed['deltas']} deltas at {args.rate}/s requested, "
        f"{streamed['achieved_rate']:.0f}/s achieved, lag at the end {streamed['lag_ms']:.1f} ms"
    )
    print(
        f"live tail: {tailed['events']} output deltas ({tailed['bytes'] / 1e6:.1f} MB) at 20/s, "
        f"lag at the end {tailed['lag_ms']:.1f} ms"
    )
    result = {
        "launch_to_ready_s": round(launch, 3),
        "launch_runs_s": [round(x, 3) for x in launches],
        "launch_goal_s": LAUNCH_GOAL_S,
        "launch_to_session_open_s": round(statistics.median(sessions), 3),
        "stream_requested_rate": args.rate,
        "stream_achieved_rate": round(streamed["achieved_rate"]),
        "stream_lag_ms": round(streamed["lag_ms"], 1),
        "stream_lag_goal_ms": 50,
        "tail_events": tailed["events"],
        "tail_lag_ms": round(tailed["lag_ms"], 1),
        "tail_lag_goal_ms": 50,
        "launch_ok": launch <= LAUNCH_GOAL_S,
        "stream_ok": streamed["achieved_rate"] >= 0.95 * args.rate and streamed["lag_ms"] < 50,
        "tail_ok": tailed["lag_ms"] < 50,
        "load_average": round(os.getloadavg()[0], 2),
        "bytecode": condition,
    }
    if baseline:
        result["baseline_launch_to_ready_s"] = round(statistics.median(r for r, _ in baseline), 3)
        result["baseline_launch_to_session_open_s"] = round(
            statistics.median(o for _, o in baseline), 3
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
