"""The Ray executor (extra ``mini-codex[ray]``): one Ray task per agent task.

Each job runs as a Ray task (``num_cpus`` / ``memory`` per task, ``max_retries`` for worker and
node deaths) that calls :func:`~mini_codex.batch.job.run_job` on whichever node Ray
chooses; the worker writes the rollout straight to the destination (so ``DEST`` must be reachable
from every node: object storage, or a shared file system). At most ``workers`` tasks are in
flight; results come back as each finishes (``ray.wait``), and the runner records each id once —
a retried task has one object ref, hence one result. A task whose retries are exhausted becomes
status ``error``.

``address=None`` starts a private local Ray instance (``num_cpus=workers``) for the run and shuts
it down afterwards; an address (``HOST:PORT`` of ``ray start --head``, or ``auto``) connects to an
existing cluster, whose nodes must have mini-codex installed. Abort (the second Ctrl-C) sets a
flag held by a small Ray actor that every running job polls; each job then interrupts its turn
like the local executor does (the rollout records the abort and is uploaded) and is not recorded,
so it runs again on resume.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from mini_codex.batch.executor import Control, ResultSink
from mini_codex.batch.job import JobSpec, TaskResult, run_job
from mini_codex.errors import MiniCodexError

__all__ = ["RayExecutor"]

_WAIT_S = 0.25
_POLL_S = 0.5


class _AbortFlag:
    """Held by a Ray actor (``num_cpus=0``): the driver sets it, running jobs poll it."""

    def __init__(self) -> None:
        self.aborted = False

    def set(self) -> None:
        self.aborted = True

    def is_set(self) -> bool:
        return self.aborted


def _run_on_worker(spec: JobSpec, flag: Any) -> dict[str, Any]:
    """The Ray task: ``run_job`` on a fresh event loop, interrupted when ``flag`` is set."""

    async def main() -> dict[str, Any]:
        import ray

        abort = anyio.Event()

        def flag_is_set() -> bool:
            try:
                return bool(ray.get(flag.is_set.remote()))
            except Exception:  # the flag's node is gone: no abort can come; the job goes on
                return False

        async def poll() -> None:
            while True:  # a remote flag: nothing to wait on locally, so poll it
                if await anyio.to_thread.run_sync(flag_is_set):
                    abort.set()
                    return
                await anyio.sleep(_POLL_S)

        async with anyio.create_task_group() as tg:
            tg.start_soon(poll)
            result = await run_job(spec, abort=abort)
            tg.cancel_scope.cancel()
        return result.to_json()

    return anyio.run(main)


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
        remote = ray.remote(_run_on_worker).options(**options)
        # The flag lives on the driver's node: a worker node that dies must not take it along
        # (every job polls it; the driver's node dying ends the run anyway).
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        flag = ray.remote(num_cpus=0)(_AbortFlag).options(scheduling_strategy=here).remote()
        pending: dict[Any, JobSpec] = {}
        queue = iter(specs)
        aborted = False
        failure: MiniCodexError | None = None  # a task that could not be made (lazy.py)
        try:
            while True:
                while len(pending) < self.workers and not control.stopping.is_set() and not failure:
                    try:
                        spec = next(queue, None)
                    except MiniCodexError as exc:
                        failure = exc
                        break
                    if spec is None:
                        break
                    pending[remote.remote(spec, flag)] = spec
                    control.on_start(spec.task.id)
                if not pending:
                    if failure is not None:
                        raise failure
                    return
                if control.aborting.is_set() and not aborted:
                    aborted = True
                    flag.set.remote()  # type: ignore[attr-defined]
                ready = await anyio.to_thread.run_sync(_wait, list(pending))
                for ref in ready:
                    spec = pending.pop(ref)
                    await on_result(await anyio.to_thread.run_sync(_collect, ref, spec, aborted))
        finally:
            if owned:
                ray.shutdown()


def _wait(refs: list[Any]) -> list[Any]:
    import ray

    ready, _ = ray.wait(refs, num_returns=1, timeout=_WAIT_S)
    return list(ready)


def _collect(ref: Any, spec: JobSpec, aborted: bool) -> TaskResult:
    import ray
    from ray.exceptions import RayError, TaskCancelledError

    try:
        return TaskResult.from_json(ray.get(ref))
    except TaskCancelledError:
        return TaskResult(id=spec.task.id, status="interrupted", model=spec.model.slug)
    except RayError as exc:
        if aborted:
            return TaskResult(id=spec.task.id, status="interrupted", model=spec.model.slug)
        message = " ".join(str(exc).split())[:500]
        return TaskResult(
            id=spec.task.id, status="error", model=spec.model.slug, error=f"ray: {message}"
        )
