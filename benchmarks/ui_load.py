"""Benchmark: time to first byte of a session page in the browser inspector (``mini-codex ui``).

Two rollouts with the same session and the same last lines, written by the generator of
``benchmarks/replay.py`` (realistic turns; a checkpoint every 2000 lines and a model compaction
every 6000, as a long session writes them): a 10k-line file and a 1M-line file (~540 MB). Each
lives in its own home, served by a real ``mini-codex ui`` subprocess on 127.0.0.1.

What is timed (``http.client``, from sending the request to the first byte of the response; the
server builds the whole JSON before answering, so this is the time to the whole document too):

* ``GET /api/sessions/{id}`` — the session page's timeline: what the page needs to draw itself.
  A file over 32 MiB is read from its newest checkpoint window (found by reading backwards), so
  the 1M-line file costs its tail, not its length. Each run first changes the file's mtime, so
  the server's in-memory cache never answers (a cold read every time, page cache warm).
* ``GET /`` — the page itself (static), for reference.
* ``GET …/steps/{step}/world_state`` and ``…/request`` of the newest step, for reference.

Goal: session page ≤ 2 s for the 1M-line file and ``ratio_1m_vs_10k`` ≤ 3. Best of ``--runs``
interleaved runs (the machine is shared). The session list is not timed: indexing reads whole
files (``rollout/index.py``), and the session page does not wait for it (a session is found by
its file name first).

Run: ``uv run python benchmarks/ui_load.py [--lines N] [--tail-lines N] [--runs N] [--dir DIR]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from replay import SESSION_ID, write_checkpointed

MINI_CODEX = Path(sys.executable).parent / "mini-codex"


def serve(home: Path) -> tuple[subprocess.Popen[str], str, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(home)
    process = subprocess.Popen(
        [str(MINI_CODEX), "ui", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    return process, host, int(port)


def ttfb(host: str, port: int, path: str) -> tuple[float, bytes]:
    connection = http.client.HTTPConnection(host, port, timeout=120)
    started = time.perf_counter()
    connection.request("GET", path)
    response = connection.getresponse()
    first = response.read(1)
    elapsed = time.perf_counter() - started
    body = first + response.read()
    connection.close()
    assert response.status == 200, (path, response.status, body[:200])
    return elapsed, body


def install(home: Path, source: Path) -> Path:
    day = home / "sessions" / "2026" / "08" / "22"
    day.mkdir(parents=True)
    target = day / f"rollout-2026-08-22T00-00-00-{SESSION_ID}.jsonl"
    source.rename(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--tail-lines", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mini-codex-ui-", dir=args.dir) as tmp:
        base = Path(tmp)
        started = time.perf_counter()
        big_lines = write_checkpointed(
            base / "big.jsonl", args.lines, base / "tail.jsonl", args.tail_lines
        )
        generated = time.perf_counter() - started
        files = {
            "10k": install(base / "home-10k", base / "tail.jsonl"),
            "1m": install(base / "home-1m", base / "big.jsonl"),
        }
        servers = {name: serve(path.parents[4]) for name, path in files.items()}
        session = f"/api/sessions/{SESSION_ID}"
        times: dict[str, list[float]] = {name: [] for name in files}
        page: dict[str, float] = {}
        documents: dict[str, dict] = {}  # type: ignore[type-arg]
        try:
            for run in range(args.runs):
                for name, path in files.items():
                    os.utime(path, ns=(time.time_ns(), time.time_ns() + run + 1))
                    _, host, port = servers[name]
                    seconds, body = ttfb(host, port, session)
                    times[name].append(seconds)
                    documents[name] = json.loads(body)
            for name in files:
                _, host, port = servers[name]
                page[f"page_{name}_s"] = round(min(ttfb(host, port, "/")[0] for _ in range(3)), 4)
                steps = [s for turn in documents[name]["turns"] for s in turn["steps"]]
                newest = steps[-1]["step_id"]
                for what in ("world_state", "request"):
                    seconds, _ = ttfb(host, port, f"{session}/steps/{newest}/{what}")
                    page[f"step_{what}_{name}_s"] = round(seconds, 4)
        finally:
            for process, _, _ in servers.values():
                process.send_signal(signal.SIGINT)
                process.wait(timeout=30)
                if process.stdout is not None:
                    process.stdout.close()
        sizes = {name: path.stat().st_size for name, path in files.items()}
    best = {name: min(values) for name, values in times.items()}
    small_lines = args.tail_lines
    last_turns = {name: documents[name]["turns"][-1]["turn_id"] for name in files}
    assert last_turns["10k"] == last_turns["1m"], "same tail, same newest turn"
    result = {
        "benchmark": "ui_load",
        "lines_10k": small_lines,
        "lines_1m": big_lines,
        "bytes_10k": sizes["10k"],
        "bytes_1m": sizes["1m"],
        "ttfb_session_10k_s": round(best["10k"], 4),
        "ttfb_session_1m_s": round(best["1m"], 4),
        "ratio_1m_vs_10k": round(best["1m"] / best["10k"], 3),
        "goal_s": 2.0,
        "goal_ratio": 3.0,
        "runs_10k_s": [round(value, 4) for value in times["10k"]],
        "runs_1m_s": [round(value, 4) for value in times["1m"]],
        "window_1m": documents["1m"]["page"],
        "whole_file_10k": documents["10k"]["page"]["whole_file"],
        **page,
        "generate_s": round(generated, 1),
    }
    print(
        f"session page TTFB: 10k lines {best['10k'] * 1000:.0f} ms, "
        f"1M lines {best['1m'] * 1000:.0f} ms (ratio {result['ratio_1m_vs_10k']})"
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
