"""The Ray executor (extra ``mini-codex[ray]``): one Ray task per agent task.

Each job runs as a Ray task (``num_cpus`` / ``memory`` per task, ``max_retries`` for worker and
node deaths) that calls :func:`~mini_codex.batch.job.run_job_blocking` on whichever node Ray
chooses; the worker writes the rollout straight to the destination (so ``DEST`` must be reachable
from every node: object storage, or a shared file system). At most ``workers`` tasks are in
flight; results come back as each finishes (``ray.wait``), and the runner records each id once —
a retried task has one object ref, hence one result. A task whose retries are exhausted becomes
status ``error``.

``address=None`` starts a private local Ray instance (``num_cpus=workers``) for the run and shuts
it down afterwards; an address (``HOST:PORT`` of ``ray start --head``, or ``auto``) connects to an
existing cluster, whose nodes must have mini-codex installed. Abort (the second Ctrl-C) cancels
the running Ray tasks (best effort: a cancelled task is not recorded and runs again on resume).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from mini_codex.batch.executor import Control, ResultSink
from mini_codex.batch.job import JobSpec, TaskResult, run_job_blocking
from mini_codex.errors import MiniCodexError

__all__ = ["RayExecutor"]

_WAIT_S = 0.25


class RayExecutor:
    name = "ray"

    def __init__(
        self,
        workers: int = 2,
        *,
        address: str | None = None,
        num_cpus: float = 1.0,
        memory: int | None = None,
        max_retries: int = 3,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        try:
            import ray  # noqa: F401
        except ImportError:
            raise MiniCodexError(
                "the ray executor needs Ray: pip install 'mini-codex[ray]'"
            ) from None
        self.workers = workers
        self.address = address
        self.num_cpus = num_cpus
        self.memory = memory
        self.max_retries = max_retries

    def _init(self) -> bool:
        """Connect (or start a local instance); True when this run started Ray itself."""
        import ray

        if ray.is_initialized():
            return False
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
        }
        try:
            if self.address is None:
                ray.init(num_cpus=self.workers, **kwargs)
            else:
                ray.init(address=self.address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local instance"
            raise MiniCodexError(f"cannot start Ray ({where}): {exc}") from None
        return True

    async def run(self, specs: Sequence[JobSpec], on_result: ResultSink, control: Control) -> None:
        import ray

        owned = self._init()  # on the main thread: Ray installs its signal handlers there
        options: dict[str, Any] = {"num_cpus": self.num_cpus, "max_retries": self.max_retries}
        if self.memory is not None:
            options["memory"] = self.memory
        remote = ray.remote(run_job_blocking).options(**options)
        pending: dict[Any, JobSpec] = {}
        queue = iter(specs)
        cancelled = False
        try:
            while True:
                while len(pending) < self.workers and not control.stopping.is_set():
                    spec = next(queue, None)
                    if spec is None:
                        break
                    pending[remote.remote(spec)] = spec
                    control.on_start(spec.task.id)
                if not pending:
                    return
                if control.aborting.is_set() and not cancelled:
                    cancelled = True
                    for ref in pending:
                        ray.cancel(ref)
                ready = await anyio.to_thread.run_sync(_wait, list(pending))
                for ref in ready:
                    spec = pending.pop(ref)
                    await on_result(await anyio.to_thread.run_sync(_collect, ref, spec, cancelled))
        finally:
            if owned:
                ray.shutdown()


def _wait(refs: list[Any]) -> list[Any]:
    import ray

    ready, _ = ray.wait(refs, num_returns=1, timeout=_WAIT_S)
    return list(ready)


def _collect(ref: Any, spec: JobSpec, cancelled: bool) -> TaskResult:
    import ray
    from ray.exceptions import RayError, TaskCancelledError

    try:
        return TaskResult.from_json(ray.get(ref))
    except TaskCancelledError:
        return TaskResult(id=spec.task.id, status="interrupted", model=spec.model.slug)
    except RayError as exc:
        if cancelled:
            return TaskResult(id=spec.task.id, status="interrupted", model=spec.model.slug)
        message = " ".join(str(exc).split())[:500]
        return TaskResult(
            id=spec.task.id, status="error", model=spec.model.slug, error=f"ray: {message}"
        )
