"""Live output of a running command, coalesced into ``exec_command_output_delta`` events.

A command may print megabytes; the event stream must not carry one event per read. ``OutputDeltas``
collects the chunks a tool reports (``ToolContext.on_output``) and emits them:

* at most one event per ``interval_s`` (default 50 ms: ≤ 20 events/s per call), the first chunk
  after a quiet period at once;
* at most ``max_bytes`` per event: when more piled up, only the newest bytes are kept (a live tail
  needs the end; the model-visible output and the rollout are not affected);
* whatever is left when the call ends is emitted before the call's ``tool_call_end``.

The events are live-only: nothing here reaches history or the rollout.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
from anyio.abc import TaskGroup

from mini_codex.protocol.session_events import ExecCommandOutputDelta

__all__ = ["DEFAULT_INTERVAL_S", "DEFAULT_MAX_BYTES", "OutputDeltas", "coalesced_output"]

DEFAULT_INTERVAL_S = 0.05
DEFAULT_MAX_BYTES = 8 * 1024


class OutputDeltas:
    """The coalescing buffer of one call (see the module docstring)."""

    def __init__(
        self,
        call_id: str,
        emit: Callable[[ExecCommandOutputDelta], None],
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.call_id = call_id
        self._emit = emit
        self.interval_s = interval_s
        self.max_bytes = max_bytes
        self._clock = clock
        self._buffer = bytearray()
        self._last_emit = -float("inf")
        self.pending = anyio.Event()
        self.dropped = 0
        """Bytes never emitted because a faster producer overran ``max_bytes``."""

    def feed(self, chunk: bytes) -> None:
        """A chunk read from the command (synchronous, never blocks)."""
        if not chunk:
            return
        self._buffer += chunk
        if len(self._buffer) > self.max_bytes:
            cut = len(self._buffer) - self.max_bytes
            self.dropped += cut
            del self._buffer[:cut]
        if self._clock() - self._last_emit >= self.interval_s:
            self.flush()
        else:
            self.pending.set()

    def due_in(self) -> float:
        """Seconds until buffered bytes may be emitted."""
        return max(0.0, self._last_emit + self.interval_s - self._clock())

    def flush(self) -> None:
        """Emit what is buffered (if anything) now."""
        if self.pending.is_set():
            self.pending = anyio.Event()
        if not self._buffer:
            return
        data = bytes(self._buffer)
        self._buffer.clear()
        self._last_emit = self._clock()
        self._emit(ExecCommandOutputDelta.of(self.call_id, data))


async def _flush_when_due(deltas: OutputDeltas) -> None:
    while True:
        await deltas.pending.wait()
        await anyio.sleep(deltas.due_in())
        deltas.flush()


@asynccontextmanager
async def coalesced_output(
    call_id: str,
    emit: Callable[[ExecCommandOutputDelta], None],
    task_group: TaskGroup,
    *,
    interval_s: float = DEFAULT_INTERVAL_S,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> AsyncIterator[OutputDeltas]:
    """An ``OutputDeltas`` whose held-back bytes are emitted on time (by a task in
    ``task_group``) while the block runs, and whose rest is emitted when it ends (also on an
    error or cancellation). The block's exceptions pass through unchanged."""
    deltas = OutputDeltas(call_id, emit, interval_s=interval_s, max_bytes=max_bytes)
    scope = anyio.CancelScope()

    async def flusher() -> None:
        with scope:
            await _flush_when_due(deltas)

    task_group.start_soon(flusher)
    try:
        yield deltas
    finally:
        scope.cancel()
        deltas.flush()
