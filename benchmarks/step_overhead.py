"""Harness overhead per step: one whole step of the runtime loop with an instant model.

A real ``Session`` (rollout recorder, workspace scanner, AGENTS.md cache, tool router) runs one
turn over a ``ScriptedModel`` that answers every request with one call of a no-op tool, ``--steps``
times, then a final message. The scripted model streams instantly and the tool returns at once,
so the wall time between two consecutive model requests is the harness's own cost per step:
recording the call and its output, dispatching the tool through the lock, capturing the next step
(environments, AGENTS.md, sandbox, workspace scan, MCP binding, router), building its world state,
diffing it against the previous step, recording the diff, and building the prompt from history.

Two workspaces: a small one (a few files) and a large one (``--files``, default 100,000 files in
≈2,000 directories, built on tmpfs when available; ``--dir`` overrides). Before measuring, the
script waits until the tree is older than the scanner's racy margin (2 s), as a workspace that
was not just written would be. The first step (session open + turn start + full initial context,
including the first full scan) is reported separately; the median is over steps 2..N+1.

Where the time goes is measured with the session's capture probe (a timestamp before each await
of a capture) and the request hook: the median time of each stretch of a step, per case. (The
scan and the AGENTS.md lookup run in worker threads, which is why a cProfile of the event loop
does not show them; these stretches do.)

The request path (``request_path.py``, issue 13): harness time per step with the real
Responses provider against a local server, at step 1 and with ``--history-mb`` (50) MB of
history, against the budget 1.5 × step 1 + the raw POST of the body; and the time from spawning
``mini-codex exec --json`` to the first byte of its first request (issue 30: ≤ 0.2 s, median of
``--first-byte-runs``), printed with the import-time budget of the top packages imported before
that byte (``-X importtime``, self time summed per package). Before any subprocess starts, the
package and site-packages are compiled (``bytecode.py``): the figures are for an installed CLI
with its ``.pyc`` files.

Prints a table and, as the final line, one JSON object:
``{"small_ms": …, "large_100k_ms": …, "steps": …}`` (plus first-step, p90 and per-stretch medians).

Run: ``uv run python benchmarks/step_overhead.py [--steps N] [--files N]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

from bytecode import ensure_bytecode
from first_byte import dependency_floor_s, import_budget
from mini_codex.config import Config
from mini_codex.discovery.workspace import DEFAULT_RACY_MARGIN_NS
from mini_codex.host import SessionOptions, open_options
from mini_codex.host.assemble import default_tools
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant, function_call
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec
from request_path import ENTRY, first_request_byte_runs, long_history, mini_exec_launch

FILES_PER_DIR = 50
STRETCHES = {
    "request->environments": "model stream, record call, run tool, record output",
    "environments->agents_md": "environments (readiness refresh)",
    "agents_md->sandbox": "AGENTS.md (stat-validated cache, worker thread)",
    "sandbox->workspace": "sandbox availability (cached)",
    "workspace->mcp": "workspace scan (incremental, worker thread)",
    "mcp->tools": "MCP binding",
    "tools->request": "router, world state build + diff + record, prompt",
}


class NoopTool:
    """Returns at once; parallel-capable (read lock)."""

    spec = ToolSpec(
        name="noop", description="does nothing", kind="function", supports_parallel=True
    )

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(text="ok", success=True)


def build_workspace(root: Path, files: int) -> int:
    """``files`` files: a .gitignore, an AGENTS.md and the rest 50 per leaf directory, the leaf
    directories spread over ≈√(leaves) packages. Returns the number of files created."""
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "AGENTS.md").write_text("# Benchmark workspace\nKeep it simple.\n")
    remaining = max(0, files - 2)
    leaves = max(1, -(-remaining // FILES_PER_DIR))
    packages = max(1, round(leaves**0.5))
    for index in range(leaves):
        leaf = root / f"pkg{index % packages:03d}" / f"mod{index // packages:03d}"
        leaf.mkdir(parents=True)
        for number in range(min(FILES_PER_DIR, remaining)):
            os.close(os.open(leaf / f"file_{number:03d}.py", os.O_CREAT | os.O_WRONLY, 0o644))
        remaining -= min(FILES_PER_DIR, remaining)
    return max(files, 2)


@dataclass(frozen=True)
class Measured:
    steps_ms: list[float]
    first_ms: float
    stretches_ms: dict[str, float]
    """Median duration of each stretch between two marks (see ``STRETCHES``), over all steps."""

    @property
    def median(self) -> float:
        return statistics.median(self.steps_ms)

    @property
    def p90(self) -> float:
        ordered = sorted(self.steps_ms)
        return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


async def run_turn(cwd: Path, home: Path, steps: int) -> Measured:
    stamps: list[float] = []
    marks: list[tuple[str, float]] = []

    async def probe(phase: str) -> None:
        marks.append((phase, time.perf_counter()))

    def on_request(prompt: object) -> None:
        now = time.perf_counter()
        stamps.append(now)
        marks.append(("request", now))

    script = [ScriptedResponse([function_call("noop", {})]) for _ in range(steps)]
    script.append(ScriptedResponse([assistant("done")]))
    config = Config()
    options = SessionOptions(
        cwd=cwd,
        home=home,
        client=ScriptedModel(script),
        config=config,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        tools=[*default_tools(config), RegisteredTool(NoopTool())],
        on_request=on_request,
        capture_probe=probe,
    )
    started = time.perf_counter()
    async with open_options(options) as session:
        assert await session.run_turn("benchmark") == "done"
    assert len(stamps) == steps + 1, len(stamps)
    deltas = [(later - earlier) * 1000 for earlier, later in itertools.pairwise(stamps)]
    stretches: dict[str, list[float]] = {}
    first_request = marks.index(("request", stamps[0]))
    for (name, earlier), (next_name, later) in itertools.pairwise(marks[first_request:]):
        stretches.setdefault(f"{name}->{next_name}", []).append((later - earlier) * 1000)
    medians = {key: statistics.median(values) for key, values in stretches.items()}
    return Measured(deltas, (stamps[0] - started) * 1000, medians)


def measure(cwd: Path, home: Path, steps: int) -> Measured:
    return anyio.run(run_turn, cwd, home, steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--small-files", type=int, default=20)
    parser.add_argument("--dir", default=None, help="where to build the workspaces")
    parser.add_argument("--history-mb", type=float, default=50.0)
    parser.add_argument("--history-steps", type=int, default=20)
    parser.add_argument("--first-byte-runs", type=int, default=7)
    args = parser.parse_args(argv)
    condition = ensure_bytecode()
    base = args.dir
    if base is None and os.access("/dev/shm", os.W_OK):
        base = "/dev/shm"

    with (
        tempfile.TemporaryDirectory(prefix="mini-codex-steps-", dir=base) as tmp,
        tempfile.TemporaryDirectory(prefix="mini-codex-steps-home-") as home_tmp,
    ):
        small, large = Path(tmp) / "small", Path(tmp) / "large"
        small.mkdir()
        large.mkdir()
        small_count = build_workspace(small, args.small_files)
        started = time.perf_counter()
        large_count = build_workspace(large, args.files)
        built = time.perf_counter() - started
        time.sleep(DEFAULT_RACY_MARGIN_NS / 1e9 + 0.2)  # let both trees age past the margin

        home = Path(home_tmp)
        results = {
            "small": measure(small, home / "small", args.steps),
            "large": measure(large, home / "large", args.steps),
        }

    print(
        f"{args.steps} steps per case (scripted model, no-op tool); workspaces in "
        f"{base or 'tmp'}: small {small_count} files, large {large_count} files "
        f"(built in {built:.1f} s); Python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    print(f"{'case':<28} {'median ms/step':>15} {'p90 ms':>10} {'first step ms':>15}")
    for name, files in (("small", small_count), ("large", large_count)):
        result = results[name]
        label = f"{name} ({files} files)"
        print(f"{label:<28} {result.median:>15.2f} {result.p90:>10.2f} {result.first_ms:>15.1f}")
    print()
    print(f"{'median ms per stretch of a step':<58} {'small':>9} {'large':>9}")
    for key, label in STRETCHES.items():
        small_ms = results["small"].stretches_ms.get(key, float("nan"))
        large_ms = results["large"].stretches_ms.get(key, float("nan"))
        print(f"{label:<58} {small_ms:>9.3f} {large_ms:>9.3f}")
    history = long_history(args.history_steps, args.history_mb)
    first_byte_runs = first_request_byte_runs(args.first_byte_runs)
    first_byte_s = statistics.median(first_byte_runs)
    floor_s = statistics.median(dependency_floor_s(sys.executable, args.first_byte_runs))
    with tempfile.TemporaryDirectory(prefix="mini-codex-imports-") as imports_tmp:
        launch = mini_exec_launch(Path(imports_tmp), [sys.executable, "-c", ENTRY])
        import_ms, top_imports = import_budget(launch, Path(imports_tmp))
    print()
    print(
        f"request path, real Responses provider + local server, {args.history_steps} steps: "
        f"step 1 {history['history_step1_ms']:.1f} ms/step, with "
        f"{history['history_long_body_mb']:.0f} MB of history {history['history_long_ms']:.1f} "
        f"ms/step (budget 1.5 x step 1 + raw POST of the body "
        f"{history['history_raw_post_ms']:.1f} ms = {history['history_budget_ms']:.1f} ms)"
    )
    print(
        f"  (for context: the same body POSTed through httpx2.AsyncClient: "
        f"{history['history_async_post_ms']:.1f} ms)"
    )
    print(
        f"time to first request byte (mini-codex exec --json, {condition}; load average "
        f"{os.getloadavg()[0]:.1f}): median {first_byte_s:.3f} s of "
        f"{', '.join(f'{run:.3f}' for run in first_byte_runs)} (budget 0.2 s)"
    )
    print(
        f"  floor of the dependencies alone (python + asyncio, anyio, httpx2, typer, msgspec, "
        f"orjson, pydantic to its first model; nothing of ours): median {floor_s:.3f} s"
    )
    print(
        f"  imports before that byte (-X importtime, self time): {import_ms:.0f} ms; top packages:"
    )
    for name, ms in top_imports:
        print(f"    {name:<36} {ms:>8.1f} ms")
    print(
        json.dumps(
            {
                **history,
                "first_request_byte_s": round(first_byte_s, 3),
                "first_request_byte_within_budget": first_byte_s <= 0.2,
                "first_request_byte_runs_s": [round(run, 3) for run in first_byte_runs],
                "imports_before_first_byte_ms": round(import_ms, 1),
                "dependency_floor_s": round(floor_s, 3),
                "imports_top_ms": {name: round(ms, 1) for name, ms in top_imports},
                "load_average": round(os.getloadavg()[0], 2),
                "bytecode": condition,
                "small_ms": round(results["small"].median, 3),
                "large_100k_ms": round(results["large"].median, 3),
                "steps": args.steps,
                "small_p90_ms": round(results["small"].p90, 3),
                "large_100k_p90_ms": round(results["large"].p90, 3),
                "small_first_step_ms": round(results["small"].first_ms, 1),
                "large_100k_first_step_ms": round(results["large"].first_ms, 1),
                "large_files": large_count,
                "large_100k_stretches_ms": {
                    key: round(value, 3) for key, value in results["large"].stretches_ms.items()
                },
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
