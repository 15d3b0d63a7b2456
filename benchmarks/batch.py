"""Batch runner throughput: tasks/s with 1 and 2 local workers and 2 Ray workers, the runner's
overhead per task against running ``mini-codex exec`` directly, and the 2-worker speed-up.

Every task is the same scripted, tool-bound agent run: one ``shell`` call that waits ``--tool-s``
(default 1 s: a test run, a build step; tool time dominates, as in real agent tasks) and then a
final answer with token usage. ``--tool-s 0.25`` shows the runner's own share growing. Each
batch task gets a fresh copy of a small workspace, a start snapshot, a diff and its rollout
uploaded to the result directory — the whole per-task path of ``mini-codex batch``.

* ``local_1_tasks_per_s`` / ``local_2_tasks_per_s``: ``--tasks`` tasks (default 200) through
  ``run_batch`` with ``LocalExecutor(1)`` / ``LocalExecutor(2)``.
* ``ray_2_tasks_per_s``: the same through ``RayExecutor(2)`` on a private local Ray instance
  (``num_cpus=2``); Ray's start-up (``ray_start_s``) is measured apart, not in the rate.
* ``exec_s_per_task``: ``--exec-runs`` runs (default 10) of ``mini-codex exec`` on the same script
  in a fresh directory, one after the other (process start, imports, session, rollout);
  ``overhead_ratio`` = seconds per task of the 1-worker batch / ``exec_s_per_task`` (goal ≤ 1.2).
* a 2-task warm-up batch runs first, so neither local rate pays the first imports alone.
* ``speedup_2_workers`` = local 2-worker rate / 1-worker rate (goal ≥ 1.7 with tool-bound tasks).
* ``large_first_task_start_s`` / ``large_peak_rss_mb``: a ``--large-tasks``-line tasks file
  (default 100,000) run the way ``mini-codex batch`` runs it (``TaskFile`` + ``build_specs`` +
  ``run_batch``) in a fresh child process: seconds from opening the file to the first task's
  start, and the child's peak RSS (goals ≤ 1 s and ≤ 200 MB; tasks are resolved lazily). The
  child stops scheduling after the first start; it checks that task is the file's first and
  that it completed.

Run: ``uv run python benchmarks/batch.py [--tasks N] [--tool-s S] [--no-ray] [--large-tasks N]
[--only-large]``; the final line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import orjson

from mini_codex.batch import JobSpec, LocalExecutor, ModelChoice, ResultStore, Task, Workspace
from mini_codex.batch.executor import Executor
from mini_codex.batch.runner import run_batch
from mini_codex.config import Config

CLI = str(Path(sys.executable).parent / "mini-codex")


def _script(path: Path, tool_s: float) -> str:
    steps = [
        {
            "output": [
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": {"command": f"sleep {tool_s}; echo done > out.txt"},
                }
            ]
        },
        {
            "output": [{"type": "message", "content": "finished"}],
            "end_turn": True,
            "usage": {"input_tokens": 100, "output_tokens": 10},
        },
    ]
    path.write_bytes(b"".join(orjson.dumps(step) + b"\n" for step in steps))
    return f"scripted:{path}"


def _specs(count: int, model: str, workspace: Path, dest: Path) -> list[JobSpec]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    return [
        JobSpec(
            task=Task(
                id=f"t{n:04d}",
                prompt="write out.txt",
                workspace=Workspace(kind="dir", source=str(workspace)),
            ),
            config=Config(),
            model=ModelChoice(model=model),
            dest=str(dest),
            env=env,
        )
        for n in range(count)
    ]


def _rate(specs: list[JobSpec], dest: Path, executor: Executor) -> tuple[float, int]:
    started = time.perf_counter()
    report = anyio.run(lambda: run_batch(specs, ResultStore(str(dest)), executor))
    elapsed = time.perf_counter() - started
    completed = sum(1 for result in report.finished if result.status == "completed")
    return len(report.finished) / elapsed, completed


def _exec_per_task(model: str, runs: int, root: Path) -> float:
    env = {**os.environ, "MINI_CODEX_HOME": str(root / "exec-home")}
    started = time.perf_counter()
    for n in range(runs):
        cwd = root / f"exec-{n}"
        cwd.mkdir()
        (cwd / "README").write_text("small workspace\n")
        done = subprocess.run(
            [CLI, "exec", "--model", model, "--cd", str(cwd), "write out.txt"],
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"mini-codex exec failed: {done.stderr}")
    return (time.perf_counter() - started) / runs


def _first_task_child(tasks: Path, dest: Path) -> None:
    """In a fresh process: open ``tasks`` as ``mini-codex batch`` does, start the first task."""
    import resource

    from mini_codex.batch.executor import Control
    from mini_codex.batch.lazy import TaskFile
    from mini_codex.cli.batch_cmd import build_specs

    store = ResultStore(str(dest))  # the store's imports (fsspec) are process start, not the file
    store.prepare()
    started = time.perf_counter()
    first: dict[str, float] = {}

    def on_start(task_id: str) -> None:
        first.setdefault(task_id, time.perf_counter() - started)
        control.stopping.set()  # the first start is what is measured: schedule nothing more

    control = Control(on_start=on_start)
    specs = build_specs(
        TaskFile(tasks),
        dest=str(dest),
        storage_options={},
        model=None,
        sandbox=None,
        overrides=[],
    )
    report = anyio.run(lambda: run_batch(specs, store, LocalExecutor(1), control=control))
    (task_id, start_s), *_ = first.items()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    done = [(result.id, result.status) for result in report.finished]
    print(json.dumps({"first": task_id, "start_s": start_s, "peak_mb": peak_mb, "done": done}))


def _large(root: Path, count: int) -> dict[str, Any]:
    (root / "large-ws").mkdir()
    model = _script(root / "large-script.jsonl", 0.0)
    tasks = root / "large-tasks.jsonl"
    with tasks.open("wb") as out:
        for n in range(count):
            line = {"id": f"t{n:07d}", "prompt": "write out.txt", "model": model}
            line["workspace"] = {"dir": str(root / "large-ws")}
            out.write(orjson.dumps(line) + b"\n")
    env = {**os.environ, "MINI_CODEX_HOME": str(root / "large-home")}
    done = subprocess.run(
        [sys.executable, __file__, "--first-task-child", str(tasks), str(root / "large-out")],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"large tasks child failed: {done.stderr}")
    child = json.loads(done.stdout.strip().splitlines()[-1])
    if child["first"] != "t0000000" or child["done"] != [["t0000000", "completed"]]:
        raise SystemExit(f"the large run did not start and complete the first task: {child}")
    return {
        "large_tasks": count,
        "large_first_task_start_s": round(child["start_s"], 3),
        "large_peak_rss_mb": round(child["peak_mb"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--tool-s", type=float, default=1.0)
    parser.add_argument("--exec-runs", type=int, default=10)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--large-tasks", type=int, default=100_000)
    parser.add_argument("--only-large", action="store_true", help="Only the large-file figures.")
    parser.add_argument("--first-task-child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_task_child:
        _first_task_child(*args.first_task_child)
        return

    root = Path(tempfile.mkdtemp(prefix="mini-codex-bench-batch-"))
    try:
        large = _large(root, args.large_tasks)
        print(f"large tasks file: {large}", file=sys.stderr)
        large_goals = {
            "large_first_task_start_le_1_s": large["large_first_task_start_s"] <= 1.0,
            "large_peak_rss_le_200_mb": large["large_peak_rss_mb"] <= 200,
        }
        if args.only_large:
            print(json.dumps({**large, "goals": large_goals}))
            return
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "README").write_text("small workspace\n")
        model = _script(root / "script.jsonl", args.tool_s)
        figures: dict[str, Any] = {"tasks": args.tasks, "tool_s": args.tool_s, **large}

        # Warm-up (imports, first bubblewrap and git runs) so neither rate pays it alone.
        _rate(_specs(2, model, workspace, root / "warm"), root / "warm", LocalExecutor(2))
        exec_s = _exec_per_task(model, args.exec_runs, root)
        figures["exec_s_per_task"] = round(exec_s, 4)
        for workers in (1, 2):
            dest = root / f"local-{workers}"
            rate, completed = _rate(
                _specs(args.tasks, model, workspace, dest), dest, LocalExecutor(workers)
            )
            figures[f"local_{workers}_tasks_per_s"] = round(rate, 3)
            figures[f"local_{workers}_completed"] = completed
            print(f"local, {workers} worker(s): {rate:.2f} tasks/s", file=sys.stderr)
        figures["batch_s_per_task_1_worker"] = round(1 / figures["local_1_tasks_per_s"], 4)
        figures["overhead_ratio"] = round(figures["batch_s_per_task_1_worker"] / exec_s, 3)
        figures["speedup_2_workers"] = round(
            figures["local_2_tasks_per_s"] / figures["local_1_tasks_per_s"], 3
        )
        if not args.no_ray:
            os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
            import ray

            from mini_codex.batch.ray_executor import RayExecutor

            started = time.perf_counter()
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            figures["ray_start_s"] = round(time.perf_counter() - started, 2)
            try:
                dest = root / "ray-2"
                rate, completed = _rate(
                    _specs(args.tasks, model, workspace, dest), dest, RayExecutor(2)
                )
            finally:
                ray.shutdown()
            figures["ray_2_tasks_per_s"] = round(rate, 3)
            figures["ray_2_completed"] = completed
            print(f"ray, 2 workers: {rate:.2f} tasks/s", file=sys.stderr)
        figures["goals"] = {
            "overhead_ratio_le_1.2": figures["overhead_ratio"] <= 1.2,
            "speedup_2_workers_ge_1.7": figures["speedup_2_workers"] >= 1.7,
            **large_goals,
        }
        print(json.dumps(figures))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
