"""The executor port and the local executor.

An executor runs job specs and hands each finished :class:`~mini_codex.batch.job.TaskResult` to
``on_result`` as soon as it is known (results stream back; the runner alone writes them). It
starts at most ``workers`` jobs at a time, takes (makes) a spec only when a worker is free,
starts nothing once ``control.stopping`` is set, and interrupts running jobs when
``control.aborting`` is set (their rollouts record the abort). A spec that cannot be made (a bad
line of a lazily read tasks file) starts nothing more; the running jobs finish, then it raises.

``LocalExecutor`` runs jobs as concurrent tasks of this process's event loop: the agent loop is
I/O-bound (model requests, tool subprocesses), so N in-process workers overlap like N processes
would, without a process start per task. ``RayExecutor`` (``ray_executor.py``) runs one Ray task
per job.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import anyio

from mini_codex.batch.job import JobSpec, TaskResult, run_job
from mini_codex.errors import MiniCodexError

__all__ = ["Control", "Executor", "LocalExecutor", "ResultSink"]

ResultSink = Callable[[TaskResult], Awaitable[None]]


@dataclass
class Control:
    """Shared between the runner, the executor and the signal handler."""

    stopping: anyio.Event = field(default_factory=anyio.Event)
    """Set on the first Ctrl-C: start no new task."""
    aborting: anyio.Event = field(default_factory=anyio.Event)
    """Set on the second Ctrl-C: interrupt the running tasks."""
    on_start: Callable[[str], None] = lambda task_id: None
    """Called with a task id when it starts (for progress)."""


class Executor(Protocol):
    name: str
    """``local`` or ``ray`` (reported in ``summary.json``)."""
    workers: int

    async def run(self, specs: Sequence[JobSpec], on_result: ResultSink, control: Control) -> None:
        """Run the specs (see module docs); returns when every started job has finished."""
        ...


class LocalExecutor:
    name = "local"

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers

    async def run(self, specs: Sequence[JobSpec], on_result: ResultSink, control: Control) -> None:
        slots = anyio.Semaphore(self.workers)

        async def one(spec: JobSpec) -> None:
            try:
                control.on_start(spec.task.id)
                result = await run_job(spec, abort=control.aborting)
                await on_result(result)
            finally:
                slots.release()

        failure: MiniCodexError | None = None  # a task that could not be made (lazy.py)
        queue = iter(specs)  # specs are made as they are taken: when a worker is free
        async with anyio.create_task_group() as tg:
            while True:
                await slots.acquire()
                if control.stopping.is_set():
                    slots.release()
                    break
                try:
                    spec = next(queue, None)
                except MiniCodexError as exc:
                    failure = exc
                    spec = None
                if spec is None:
                    slots.release()
                    break
                tg.start_soon(one, spec)
        if failure is not None:
            raise failure
