"""The rollout recorder: one background writer task per session appending JSONL lines in call order.

What belongs here: ordering, serialization, timestamps, barriers (flush / turn end / shutdown),
fsync policy, I/O-error retry and the checkpoint counters. What does not: the lock and the
torn-line repair (``locking.py``), file naming (``paths.py``), reading and replay (``reader.py``,
``replay/``), and *when* to checkpoint (the session decides, asking :meth:`checkpoint_due`).

Lifecycle::

    async with RolloutRecorder.open(path, session_meta=meta) as rec:   # new session, lazy
        await rec.record([ResponseItemLine(payload=user_message("hi"))])
        await rec.turn_ended()                                           # fsync (configurable)

    async with RolloutRecorder.open(path) as rec:                        # resume: append
        ...

``open`` owns a task group; :meth:`start` runs the writer inside a task group the caller owns
instead (then call :meth:`aclose`).

Guarantees:

* **Order.** Lines are written in the order :meth:`record` calls return, one JSON object per
  line, each line written with its own ``write(2)`` on an ``O_APPEND`` descriptor (no user-space
  buffer, so every line is "flushed" when written). :meth:`record` only enqueues; :meth:`flush` is
  a barrier that returns once everything recorded before it is written.
* **Timestamps** are stamped by the writer at write time (UTC, ``...123Z``, from the injectable
  clock). A timestamp already on a recorded line is replaced.
* **Lazy creation.** A new session touches the disk only on the first :meth:`record` (or
  :meth:`materialize`): directories are made, the file is created and locked, and the
  ``session_meta`` line (with ``mini_codex_schema``) is written first. A session that records
  nothing leaves no file.
* **Resume** opens the existing file for append, takes the lock, terminates a torn last line and
  writes no new ``session_meta``.
* **One writer per file**: a second recorder on the same path fails fast with
  :class:`~mini_codex.errors.RolloutLockedError` (on ``open`` when resuming, on the first
  ``record`` for a new file) and writes nothing.
* **I/O errors** (disk full, EIO): the writer drops its append handle and keeps every unwritten
  line in memory. The next barrier (flush, turn end, close) reopens the file and retries once; if
  that fails too, the barrier raises :class:`~mini_codex.errors.RolloutError` naming the path and
  the number of lines still held. Nothing is dropped silently.
* **Cancellation** of the writer task still writes the lines already queued, synchronously,
  before releasing the lock.

**Checkpoints (a mini-codex extension; Codex readers parse them as ordinary lines).** Resume must
stay O(tail) even in sessions that never compact, and in long turns that compact many times (the
reverse scan passes a real compaction until it has the turn's settings, i.e. back to the turn's
start). The recorder counts lines and bytes recorded since the last checkpoint; when
:meth:`checkpoint_due` says so, the session calls :meth:`write_checkpoint`, which appends::

    {"type":"compacted","payload":{"message":"","replacement_history":[...full history...],
                                   "mini_codex_checkpoint":{...reference context, previous turn
                                   settings, window...}}}
    {"type":"world_state","payload":{"full":true,"state":{...current snapshot...}}}

A ``compacted`` line with a replacement history is exactly where Codex's reverse scan stops, and a
full ``world_state`` right after it re-establishes the baseline that the compaction resets, so a
Codex reader reconstructs the same history and baseline from the tail. The ``mini_codex_checkpoint``
object (built by ``replay.checkpoint.checkpoint_payload``) carries what a real compaction
would lose: the reference context and previous-turn settings, and the window identity; mini-codex's
replay stops reading at it.

The rule. The history carried is the model-visible history, so a checkpoint costs one copy of it.
That copy is kept a bounded fraction of the file: :meth:`write_checkpoint` encodes the checkpoint
and writes it only if at least ``checkpoint_min_ratio`` (default 5) times its size were recorded
since the last checkpoint; otherwise it declines, and :meth:`checkpoint_due` stays false until
that many times the declined size were recorded (or a compaction replaced the history, which makes
the declined size stale). So checkpoints are at most 1 / ratio of the other lines (20 %: a rollout
with checkpoints is at most 1.2× the same rollout without). A real compaction does not reset the
budget (it bounds the history, and so the cost of the next checkpoint, but is no checkpoint).
Resume reads a tail of at most ``max(checkpoint_every_items lines, checkpoint_every_bytes,
ratio × one checkpoint)`` after the newest checkpoint; with compaction bounding the history by the
context window, a checkpoint costs at most about one window, so that tail is bounded by the window,
not by the session or the turn. A session whose lines are nearly all history (no compaction) gets
no checkpoints: the tail is then the history itself, which resume must load anyway.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import orjson
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mini_codex.errors import RolloutError
from mini_codex.protocol.items import ResponseItem
from mini_codex.protocol.rollout import (
    MINI_CODEX_SCHEMA,
    CompactedLine,
    RolloutLine,
    SessionMeta,
    TurnContextItem,
    WorldStateItem,
    WorldStateLine,
    format_timestamp,
)
from mini_codex.rollout.locking import LockedRolloutFile

if TYPE_CHECKING:
    from mini_codex.context.window import PreviousTurnSettings, WindowInfo

__all__ = ["Clock", "RecorderOptions", "RolloutRecorder"]

_log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
"""Returns the current time (aware); injected so tests get deterministic timestamps."""

_QUEUE_SIZE = 1024  # commands in flight before record() waits for the writer (backpressure)


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class RecorderOptions:
    """Durability and checkpoint policy of a :class:`RolloutRecorder`.

    Defaults and why:

    * ``fsync_at_turn_end=True``: a finished turn survives power loss. An fsync costs ~90 µs on
      these machines (~1000× an appended line) but happens once per turn, which is noise next to
      a model request. Lines inside a turn are only flushed to the OS (they survive kill -9, not
      a power cut), like Codex.
    * ``fsync_on_shutdown=True``: the same guarantee for the tail written after the last turn.
    * ``checkpoint_every_items=2000``: Codex sessions run tens to a few hundred lines per turn,
      so this is one checkpoint every few dozen turns; resume then reads at most ~2000 lines
      (~10 ms of parsing) plus one history copy.
    * ``checkpoint_every_bytes=16 MiB``: bounds the tail by size when items are huge (big tool
      outputs): at ~90 MB/s parsing, resume reads < 0.2 s of tail. A checkpoint writes the whole
      history once, so both thresholds keep checkpoint bytes a small fraction of the file as long
      as the history is smaller than the tail they allow.
    * ``checkpoint_min_ratio=5``: a checkpoint (one copy of the history) is written only once five
      times its size were recorded since the last one, so checkpoints add at most 20 %; 0 writes
      one whenever the thresholds above say so, whatever it costs.
    """

    fsync_at_turn_end: bool = True
    fsync_on_shutdown: bool = True
    checkpoint_every_items: int = 2000
    checkpoint_every_bytes: int = 16 * 1024 * 1024
    checkpoint_min_ratio: float = 5.0


@dataclass
class _Barrier:
    fsync: bool
    shutdown: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)
    error: RolloutError | None = None


class RolloutRecorder:
    """Appends rollout lines to one file from one owned background task (see module docs)."""

    def __init__(
        self,
        path: Path,
        *,
        session_meta: SessionMeta | None = None,
        options: RecorderOptions | None = None,
        clock: Clock = _utc_now,
    ) -> None:
        """``session_meta`` given: a new session (lazy file). ``None``: resume ``path``."""
        self.path = path
        self.options = options or RecorderOptions()
        self._clock = clock
        self._session_meta = session_meta
        self._file: LockedRolloutFile | None = None
        # Created in start(): the writer task owns (and closes) both ends.
        self._send: MemoryObjectSendStream[list[bytes] | _Barrier]
        self._receive: MemoryObjectReceiveStream[list[bytes] | _Barrier]
        self._pending: deque[bytes] = deque()  # encoded bodies, not yet stamped or written
        self._in_flight: bytes | None = None  # stamped line whose write failed; retried first
        self._write_error: OSError | None = None
        self._started = False
        self._closed = False
        self._writer_done = False
        self._items_since_checkpoint = 0
        self._bytes_since_checkpoint = 0
        self._declined_cost = 0  # bytes of the last checkpoint declined as too costly
        self._stamp_key: tuple[datetime, Any] | None = None
        self._stamp_bytes = b""
        self.lines_written = 0
        """Lines appended by this recorder (including ``session_meta``)."""

    # --- lifecycle -------------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        path: Path,
        *,
        session_meta: SessionMeta | None = None,
        options: RecorderOptions | None = None,
        clock: Clock = _utc_now,
    ) -> AsyncIterator[RolloutRecorder]:
        """Run a recorder in its own task group; drains, fsyncs and unlocks on exit."""
        recorder = cls(path, session_meta=session_meta, options=options, clock=clock)
        recorder._open_existing()  # resume errors (missing, locked) raise here, ungrouped
        body_error: Exception | None = None
        close_error: Exception | None = None
        async with anyio.create_task_group() as task_group:
            await recorder.start(task_group)
            try:
                yield recorder
            except Exception as exc:  # re-raised below, outside the task group (not grouped)
                body_error = exc
            finally:
                with anyio.CancelScope(shield=True):
                    try:
                        await recorder.aclose()
                    except Exception as exc:
                        close_error = exc
        if body_error is not None:
            if close_error is not None:
                body_error.add_note(f"while closing the rollout: {close_error}")
            raise body_error
        if close_error is not None:
            raise close_error

    async def start(self, task_group: TaskGroup) -> None:
        """Start the writer in ``task_group``. Resuming opens and locks the file here."""
        if self._started:
            raise RuntimeError("RolloutRecorder.start() called twice")
        self._open_existing()
        self._send, self._receive = anyio.create_memory_object_stream(_QUEUE_SIZE)
        self._started = True
        await task_group.start(self._run)

    def _open_existing(self) -> None:
        if self._session_meta is None and self._file is None:
            self._file = LockedRolloutFile.open(self.path, create=False)

    async def aclose(self) -> None:
        """Write everything recorded, fsync if configured, release the lock. Idempotent.

        Raises :class:`RolloutError` if lines could not be written even after a retry.
        """
        if self._closed:
            return
        self._closed = True
        if not self._started or self._writer_done:
            return
        barrier = _Barrier(fsync=self.options.fsync_on_shutdown, shutdown=True)
        await self._send.send(barrier)
        await barrier.done.wait()
        if barrier.error is not None:
            raise barrier.error

    @property
    def materialized(self) -> bool:
        """True once the file exists and is locked by this recorder."""
        return self._file is not None

    # --- recording -------------------------------------------------------------------------------

    async def materialize(self) -> None:
        """Create the file now (new sessions), writing ``session_meta``. No-op when open."""
        self._check_open()
        self._materialize()

    async def record(self, lines: Sequence[RolloutLine]) -> None:
        """Queue ``lines`` for writing, in order. Encoding errors raise here, before queueing."""
        self._check_open()
        await self._queue(lines, [_encode_body(line.to_json()) for line in lines])

    async def _queue(self, lines: Sequence[RolloutLine], bodies: list[bytes]) -> None:
        """Queue already-encoded ``bodies`` (one per line of ``lines``) for writing."""
        if not bodies:
            return
        self._materialize()
        for line, body in zip(lines, bodies, strict=True):
            if isinstance(line, CompactedLine):
                # The history was replaced (usually shrunk): the cost of a declined checkpoint
                # is stale, so the next due one is tried at once. The budget is not reset: a
                # compaction is no checkpoint (module docs).
                self._declined_cost = 0
            self._items_since_checkpoint += 1
            self._bytes_since_checkpoint += len(body) + _STAMP_OVERHEAD
        try:
            self._send.send_nowait(bodies)  # the common case: no task switch per record()
        except anyio.WouldBlock:
            await self._send.send(bodies)  # the writer is behind: wait for room (backpressure)

    async def flush(self) -> None:
        """Barrier: return once everything recorded so far is written (flushed to the OS)."""
        await self._barrier(fsync=False)

    async def turn_ended(self) -> None:
        """Barrier at the end of a turn; fsyncs when ``fsync_at_turn_end``."""
        await self._barrier(fsync=self.options.fsync_at_turn_end)

    # --- checkpoints -----------------------------------------------------------------------------

    def checkpoint_due(self) -> bool:
        """True when enough lines or bytes were recorded since the last checkpoint, and at
        least ``checkpoint_min_ratio`` × the last declined checkpoint's bytes (module docs)."""
        options = self.options
        return (
            self._items_since_checkpoint >= options.checkpoint_every_items
            or self._bytes_since_checkpoint >= options.checkpoint_every_bytes
        ) and self._bytes_since_checkpoint >= options.checkpoint_min_ratio * self._declined_cost

    async def write_checkpoint(
        self,
        history: Sequence[ResponseItem],
        world_state: dict[str, Any] | None,
        reference_context: TurnContextItem | None,
        previous_turn_settings: PreviousTurnSettings | None,
        window: WindowInfo,
    ) -> bool:
        """Append a checkpoint: ``compacted`` (full history) then a full ``world_state``.

        ``world_state`` is the current baseline snapshot; ``None`` (no baseline) writes no
        ``world_state`` line, so replay ends with no baseline either, as it would have.

        Declined (nothing written, returns False) when the checkpoint would cost more than
        1 / ``checkpoint_min_ratio`` of the bytes recorded since the last one; it is not tried
        again before that many times its cost were recorded (module docs).
        """
        from mini_codex.rollout.replay.checkpoint import checkpoint_payload  # resume-side module

        payload = checkpoint_payload(history, reference_context, previous_turn_settings, window)
        lines: list[RolloutLine] = [CompactedLine(payload=payload)]
        if world_state is not None:
            lines.append(WorldStateLine(payload=WorldStateItem(full=True, state=world_state)))
        self._check_open()
        bodies = [_encode_body(line.to_json()) for line in lines]  # once: the cost and the write
        ratio = self.options.checkpoint_min_ratio
        if ratio > 0:
            cost = sum(len(body) + _STAMP_OVERHEAD for body in bodies)
            if self._bytes_since_checkpoint < ratio * cost:
                self._declined_cost = cost
                return False
        await self._queue(lines, bodies)
        self._reset_checkpoint_counters()
        return True

    # --- internals -------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed or self._writer_done:
            raise RolloutError(f"rollout recorder for {self.path} is closed")
        if not self._started:
            raise RuntimeError("RolloutRecorder used before start() (or outside open())")

    def _reset_checkpoint_counters(self) -> None:
        self._items_since_checkpoint = 0
        self._bytes_since_checkpoint = 0
        self._declined_cost = 0

    def _materialize(self) -> None:
        if self._file is not None:
            return
        assert self._session_meta is not None  # resumed recorders open in start()
        meta = self._session_meta.to_json()
        meta["mini_codex_schema"] = MINI_CODEX_SCHEMA
        body = _encode_body({"type": "session_meta", "payload": meta})
        self._file = LockedRolloutFile.open(self.path, create=True)
        # The queue is empty here (nothing was recorded before), so writing directly keeps order.
        self._pending.appendleft(body)
        self._write_pending()

    async def _run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        current: _Barrier | None = None
        try:
            async for command in self._receive:
                if isinstance(command, list):
                    self._pending.extend(command)
                    if self._write_error is None and self._file is not None:
                        self._write_pending()
                    continue
                current = command
                command.error = await self._complete_barrier(command.fsync)
                current = None
                if command.shutdown:
                    self._release(command)
                    return
                command.done.set()
        finally:
            self._writer_done = True
            if current is not None and not current.done.is_set():
                current.error = current.error or RolloutError(
                    f"rollout recorder for {self.path} was cancelled"
                )
                current.done.set()
            self._write_leftovers_on_cancel()
            self._receive.close()
            self._send.close()

    async def _barrier(self, *, fsync: bool) -> None:
        self._check_open()
        if self._writer_done:
            raise RolloutError(f"rollout recorder for {self.path} has stopped (cancelled)")
        barrier = _Barrier(fsync=fsync)
        await self._send.send(barrier)
        await barrier.done.wait()
        if barrier.error is not None:
            raise barrier.error

    async def _complete_barrier(self, fsync: bool) -> RolloutError | None:
        file = self._file
        if file is None:
            return None  # never materialized: nothing to write or sync
        if self._write_error is not None:
            failed = self._write_error
            try:
                file.reopen(self._in_flight)
            except (OSError, RolloutError) as exc:
                return self._retry_failed(exc)
            self._write_error = None
            self._write_pending()
            if self._write_error is not None:
                return self._retry_failed(self._write_error)
            _log.warning("rollout %s: recovered after a write error: %s", self.path, failed)
        if fsync:
            try:
                await anyio.to_thread.run_sync(file.fsync)
            except OSError as exc:
                return RolloutError(f"cannot fsync rollout {self.path}: {exc}")
        return None

    def _retry_failed(self, exc: BaseException) -> RolloutError:
        held = len(self._pending) + (self._in_flight is not None)
        return RolloutError(
            f"cannot write rollout {self.path}: {exc} ({held} line(s) are held in memory and "
            "will be retried at the next flush)"
        )

    def _write_pending(self) -> None:
        file = self._file
        assert file is not None
        while self._in_flight is not None or self._pending:
            line = self._in_flight
            if line is None:
                line = self._stamp(self._pending.popleft())
                self._in_flight = line
            try:
                file.write(line)
            except OSError as exc:
                _log.warning("rollout %s: write failed, will retry: %s", self.path, exc)
                self._write_error = exc
                file.drop_write_handle()
                return
            self._in_flight = None
            self.lines_written += 1

    def _stamp(self, body: bytes) -> bytes:
        """``body`` with the write-time timestamp in front (formatted once per millisecond)."""
        now = self._clock()
        key = (now.replace(microsecond=now.microsecond - now.microsecond % 1000), now.utcoffset())
        if key != self._stamp_key:
            self._stamp_key = key
            self._stamp_bytes = _stamp_prefix(now)
        return self._stamp_bytes + body[1:] + b"\n"

    def _release(self, barrier: _Barrier) -> None:
        file, self._file = self._file, None
        if file is not None:
            if barrier.error is not None:
                held = len(self._pending) + (self._in_flight is not None)
                barrier.error = RolloutError(
                    f"{barrier.error}; the recorder is closing with {held} line(s) unwritten"
                )
            file.close()
        barrier.done.set()

    def _write_leftovers_on_cancel(self) -> None:
        """Writer task ending without a shutdown barrier (cancelled): write what is queued."""
        file = self._file
        if file is None:
            return
        while True:
            try:
                command = self._receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
            if isinstance(command, list):
                self._pending.extend(command)
            else:
                command.error = RolloutError(f"rollout recorder for {self.path} was cancelled")
                command.done.set()
        if self._write_error is not None:
            try:
                file.reopen(self._in_flight)
                self._write_error = None
            except (OSError, RolloutError):
                pass
        if self._write_error is None:
            self._write_pending()
        self._file = None
        self._closed = True
        file.close()


_STAMP_OVERHEAD = len(b'{"timestamp":"2026-08-22T00:42:19.123Z",') + 1  # stamp plus newline


def _encode_body(data: dict[str, Any]) -> bytes:
    """JSON of a line without its timestamp (the writer adds it in front at write time)."""
    data.pop("timestamp", None)
    return orjson.dumps(data)


def _stamp_prefix(now: datetime) -> bytes:
    return b'{"timestamp":"' + format_timestamp(now).encode() + b'",'
