"""The batch runner: what to run (resume), who writes results (only here), and the summary.

``run_batch`` reads the results already in the store, skips ids that finished (with
``retry_failed``, ids whose status is not ``completed`` are removed from ``results.jsonl`` in one
atomic rewrite and run again), hands the rest to the executor, and appends each result the moment
it arrives — once per id, whatever the executor retried. An ``interrupted`` outcome (the user
aborted the run) is not recorded, so the next run does that task again. At the end it writes
``summary.json`` (and ``predictions.jsonl`` for SWE-bench runs).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
import orjson

from mini_codex.batch.executor import Control, Executor
from mini_codex.batch.job import JobSpec, TaskResult
from mini_codex.batch.lazy import LazySpecs, as_lazy, task_ids
from mini_codex.batch.store import PREDICTIONS, SUMMARY, ResultStore
from mini_codex.batch.tasks import STATUSES

__all__ = ["BatchReport", "plan", "run_batch", "summarize"]


@dataclass
class BatchReport:
    total: int
    """Tasks in the input."""
    skipped: int
    """Already finished in an earlier run."""
    scheduled: int
    finished: list[TaskResult] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    """Ids that did not finish in this run (interrupted, or never started after a stop)."""
    duration_s: float = 0.0
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def interrupted(self) -> bool:
        return bool(self.unfinished)


def plan(
    specs: Sequence[JobSpec], records: list[dict[str, Any]], *, retry_failed: bool
) -> tuple[LazySpecs, list[dict[str, Any]]]:
    """The specs to run now (made when taken: ``lazy.LazySpecs``), and the records to keep
    (without those of tasks run again)."""
    lazy = as_lazy(specs)
    by_id = {record["id"]: record for record in records}
    failed = {task_id for task_id, record in by_id.items() if record.get("status") != "completed"}
    # Records of other ids (another tasks file's) are kept; the file is read only when needed.
    again = set(lazy.ids) & failed if retry_failed and failed else set()
    kept = [record for record in records if record["id"] not in again]
    done = {record["id"] for record in kept}
    return lazy.select(lambda task_id: task_id not in done), kept


async def run_batch(
    specs: Sequence[JobSpec],
    store: ResultStore,
    executor: Executor,
    *,
    retry_failed: bool = False,
    control: Control | None = None,
    on_finished: Callable[[TaskResult], None] = lambda result: None,
    swebench: bool = False,
) -> BatchReport:
    control = control or Control()
    specs = as_lazy(specs)
    started_at = datetime.now(UTC)
    started = time.monotonic()
    await anyio.to_thread.run_sync(store.prepare)
    existing = await anyio.to_thread.run_sync(store.read_results)
    todo, records = plan(specs, existing, retry_failed=retry_failed)
    if len(records) != len(existing):
        await anyio.to_thread.run_sync(store.rewrite_results, records)
    # How many are left is counted when the run ends: counting now would read a lazy tasks
    # file through before its first task starts.
    report = BatchReport(total=len(specs), skipped=0, scheduled=0)
    written = {record["id"] for record in records}
    lock = anyio.Lock()

    async def sink(result: TaskResult) -> None:
        if result.status == "interrupted":
            return
        async with lock:
            if result.id in written:
                return  # never a second line for one id
            record = result.to_json()
            await anyio.to_thread.run_sync(store.append_result, record, list(records))
            records.append(record)
            written.add(result.id)
            report.finished.append(result)
        on_finished(result)

    try:
        await executor.run(todo, sink, control)
    finally:
        with anyio.CancelScope(shield=True):
            report.duration_s = time.monotonic() - started
            todo_ids = todo.ids
            report.scheduled = len(todo_ids)
            report.skipped = report.total - report.scheduled
            report.unfinished = [task_id for task_id in todo_ids if task_id not in written]
            report.summary = summarize(
                records, specs, report, executor.workers, executor.name, started_at
            )
            await anyio.to_thread.run_sync(store.fold_results)
            await anyio.to_thread.run_sync(store.write_json, SUMMARY, report.summary)
            if swebench:
                await anyio.to_thread.run_sync(store.write_bytes, PREDICTIONS, predictions(records))
    return report


def predictions(records: list[dict[str, Any]]) -> bytes:
    """SWE-bench ``predictions.jsonl``: ``instance_id``, ``model_name_or_path``, ``model_patch``."""
    lines = (
        orjson.dumps(
            {
                "instance_id": record["id"],
                "model_name_or_path": record.get("model") or "mini-codex",
                "model_patch": record.get("diff") or "",
            }
        )
        + b"\n"
        for record in records
    )
    return b"".join(lines)


def summarize(
    records: list[dict[str, Any]],
    specs: Sequence[JobSpec],
    report: BatchReport,
    workers: int,
    executor: str,
    started_at: datetime,
) -> dict[str, Any]:
    ids = set(task_ids(specs))
    mine = [record for record in records if record["id"] in ids]
    statuses = Counter(record.get("status") for record in mine)
    tokens: Counter[str] = Counter()
    for record in mine:
        usage = record.get("token_usage") or {}
        tokens.update({k: v for k, v in usage.items() if isinstance(v, int)})
    run_count = len(report.finished)
    return {
        "tasks": len(specs),
        "finished": len(mine),
        "remaining": len(specs) - len(mine),
        "by_status": {status: statuses.get(status, 0) for status in STATUSES},
        "token_usage": dict(tokens),
        "last_run": {
            "executor": executor,
            "workers": workers,
            "started": started_at.isoformat().replace("+00:00", "Z"),
            "duration_s": round(report.duration_s, 3),
            "skipped": report.skipped,
            "ran": run_count,
            "unfinished": len(report.unfinished),
            "tasks_per_s": round(run_count / report.duration_s, 3) if report.duration_s else 0.0,
            "interrupted": report.interrupted,
        },
    }
