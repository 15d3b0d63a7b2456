"""The OS-level side of writing one rollout file: exclusive lock, append handle, torn-line repair.

What belongs here: synchronous file operations on a single rollout path, with OS errors translated
into :class:`~mini_codex.errors.RolloutError` where the caller cannot do better. What does not:
serialization, ordering, queueing and timestamps (``recorder.py``).

**One writer per file.** :meth:`LockedRolloutFile.open` takes ``fcntl.flock(LOCK_EX | LOCK_NB)`` on
its own open file description of the rollout file and keeps it until :meth:`close`. A flock
conflicts with every other open file description, so a second writer in the same process or in
another one fails fast with :class:`~mini_codex.errors.RolloutLockedError` before writing a byte.
The lock lives on a read-only descriptor that is separate from the append descriptor, so dropping
and reopening the append descriptor after an I/O error never releases the lock.

**Torn last line.** Opening a non-empty file for append checks its last byte; if it is not ``\\n``
one newline is appended, so the torn line stays a single unparsable line and every later line
parses (spec §5.3; idempotent). When the torn bytes are known to be *our own* partial write of the
line about to be retried, they are truncated away instead, so the retry neither leaves a bad line
nor duplicates an item.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from mini_codex.errors import RolloutError, RolloutLockedError

__all__ = ["LockedRolloutFile"]

_FILE_MODE = 0o600  # sessions hold prompts and tool output; keep them private by default


class LockedRolloutFile:
    """An exclusively locked append handle on one rollout file (synchronous, not thread-safe)."""

    def __init__(self, path: Path, lock_fd: int, write_fd: int, size: int, repaired: bool) -> None:
        self.path = path
        self._lock_fd = lock_fd
        self._write_fd: int | None = write_fd
        self._good_size = size
        self.repaired_torn_line = repaired
        """True when opening appended a newline to terminate a torn last line."""

    @classmethod
    def open(cls, path: Path, *, create: bool) -> LockedRolloutFile:
        """Lock ``path`` and open it for append.

        ``create=True`` makes a new file (and its directories) and refuses a non-empty existing
        one; ``create=False`` requires the file to exist (resume) and repairs a torn last line.
        """
        flags = os.O_RDONLY | os.O_CLOEXEC
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
            flags |= os.O_CREAT
        try:
            lock_fd = os.open(path, flags, _FILE_MODE)
        except FileNotFoundError:
            raise RolloutError(f"cannot resume rollout {path}: no such file") from None
        except OSError as exc:
            raise RolloutError(f"cannot open rollout {path}: {exc.strerror or exc}") from exc
        try:
            _lock(lock_fd, path)
            size = os.fstat(lock_fd).st_size
            if create and size > 0:
                raise RolloutError(
                    f"refusing to start a new session in {path}: the file already exists and is "
                    "not empty (resume it instead)"
                )
            write_fd = _open_append(path)
        except OSError as exc:
            os.close(lock_fd)
            raise RolloutError(f"cannot open rollout {path}: {exc.strerror or exc}") from exc
        except BaseException:
            os.close(lock_fd)
            raise
        self = cls(path, lock_fd, write_fd, size, repaired=False)
        try:
            self._repair_tail(retry_line=None)
        except OSError as exc:
            self.close()
            raise RolloutError(f"cannot repair the last line of {path}: {exc}") from exc
        return self

    @property
    def size(self) -> int:
        """Bytes known to be durably appended by complete writes (plus the file's prior size)."""
        return self._good_size

    @property
    def writable(self) -> bool:
        return self._write_fd is not None

    def write(self, data: bytes) -> None:
        """Append ``data`` completely (looping over short writes); raises ``OSError``."""
        fd = self._write_fd
        if fd is None:
            raise OSError(errno.EBADF, "rollout append handle was dropped after an I/O error")
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        self._good_size += len(data)

    def drop_write_handle(self) -> None:
        """Close the append descriptor after an I/O error; the lock is kept."""
        fd, self._write_fd = self._write_fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass  # the descriptor is gone either way; the reopen will report real problems

    def reopen(self, retry_line: bytes | None) -> None:
        """Open a fresh append descriptor on the same (still locked) file and repair its tail.

        ``retry_line`` is the line whose write failed and is about to be written again: if the
        bytes after the last complete write are a prefix of it, they are our own torn write and
        are truncated. Raises ``OSError``, or ``RolloutError`` if the path now names another file.
        """
        self.drop_write_handle()
        fd = _open_append(self.path)
        locked = os.fstat(self._lock_fd)
        current = os.fstat(fd)
        if (locked.st_dev, locked.st_ino) != (current.st_dev, current.st_ino):
            os.close(fd)
            raise RolloutError(
                f"rollout {self.path} was replaced or removed while this session was writing it"
            )
        self._write_fd = fd
        self._repair_tail(retry_line)

    def fsync(self) -> None:
        """Force written lines to stable storage; raises ``OSError``."""
        os.fsync(self._write_fd if self._write_fd is not None else self._lock_fd)

    def close(self) -> None:
        """Close both descriptors, releasing the lock. Idempotent."""
        self.drop_write_handle()
        if self._lock_fd >= 0:
            lock_fd, self._lock_fd = self._lock_fd, -1
            os.close(lock_fd)

    def _repair_tail(self, retry_line: bytes | None) -> None:
        size = os.fstat(self._lock_fd).st_size
        if size == 0:
            self._good_size = 0
            return
        if retry_line is not None and size > self._good_size:
            tail = os.pread(self._lock_fd, size - self._good_size, self._good_size)
            if retry_line.startswith(tail):
                assert self._write_fd is not None
                os.ftruncate(self._write_fd, self._good_size)
                return
        if os.pread(self._lock_fd, 1, size - 1) != b"\n":
            self._good_size = size
            self.write(b"\n")
            self.repaired_torn_line = True
        else:
            self._good_size = size


def _lock(fd: int, path: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RolloutLockedError(
            f"rollout {path} is already being written by another session (its writer lock is "
            "held, in this process or another one); refusing to write to it"
        ) from None


def _open_append(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
