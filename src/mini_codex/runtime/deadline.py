"""A blocking capture phase with a deadline: the step goes on without it when it is late.

What belongs here: :class:`DeadlineCall`, which runs one blocking function (the workspace scan, the
AGENTS.md load) in its own daemon thread and lets a capture wait for it at most a deadline. A
call that is late keeps running; while it runs no second one is started (the scanner and the
AGENTS.md cache are not re-entrant, and a hung file system must not collect threads), and the
next capture waits for it again, then starts a fresh call for its own, current answer.

What does not belong here: what to tell the model when a phase is late (``capture.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import msgspec

__all__ = ["DeadlineCall", "Late"]

T = TypeVar("T")


class Late:
    """The call did not finish within the deadline."""

    def __repr__(self) -> str:
        return "LATE"


LATE = Late()


class _Job(msgspec.Struct, Generic[T], eq=False):
    done: anyio.Event
    result: T | None = None
    error: BaseException | None = None
    finished: bool = False


class DeadlineCall(Generic[T]):
    """Runs ``fn`` in a daemon thread, one call at a time (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._job: _Job[T] | None = None

    @property
    def running(self) -> bool:
        return self._job is not None and not self._job.finished

    async def call(self, fn: Callable[[], T], deadline_s: float) -> T | Late:
        """``fn()``'s result, or :data:`LATE` if it did not finish within ``deadline_s``.

        Exceptions raised by ``fn`` propagate. A call still running from an earlier, late
        capture is waited for first (its result is stale and dropped); then ``fn`` runs afresh.
        """
        with anyio.move_on_after(deadline_s):
            job = self._job
            if job is not None:
                await job.done.wait()
                self._job = None
            job = self._start(fn)
            self._job = job
            await job.done.wait()
            self._job = None
            if job.error is not None:
                raise job.error
            return job.result  # type: ignore[return-value]
        return LATE

    def _start(self, fn: Callable[[], T]) -> _Job[T]:
        job: _Job[T] = _Job(anyio.Event())
        token = anyio.lowlevel.current_token()

        def run() -> None:
            try:
                job.result = fn()
            except BaseException as exc:  # handed to the waiting capture
                job.error = exc
            job.finished = True
            try:
                anyio.from_thread.run_sync(job.done.set, token=token)
            except RuntimeError:
                pass  # the event loop is gone: nobody waits any more

        threading.Thread(target=run, name=f"mini-codex-{self.name}", daemon=True).start()
        return job
