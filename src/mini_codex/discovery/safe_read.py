"""Reading a file the model controls: never blocks, never leaves the workspace, bounded (I/O).

What belongs here: :func:`read_workspace_file`, the one way discovery reads the content of a
workspace file (AGENTS.md, ``.gitignore``, ``.git/info/exclude``). The model can make any of these
a FIFO, a device, a symlink out of the workspace or to itself, a 20 GB file or binary junk, so:

* the path is resolved first and must stay inside ``boundary`` (when given): a symlink may point
  elsewhere in the workspace, never outside it;
* it is opened with ``O_NONBLOCK | O_NOCTTY | O_NOFOLLOW`` on the resolved path, so opening a FIFO
  without a writer or a terminal returns at once, and a symlink swapped in after resolving fails;
* only a regular file (checked with ``fstat`` on the open descriptor) is read;
* at most ``max_bytes`` are read; :attr:`FileContent.truncated` says whether more was there.

Every refusal is an :class:`UnsafeFileError` whose message says why, for a note to the model.
What does not belong here: decoding and interpreting the bytes (the callers).
"""

from __future__ import annotations

import errno
import os
import stat

import msgspec

__all__ = [
    "FileContent",
    "UnsafeFileError",
    "display_path",
    "file_kind",
    "inside",
    "read_workspace_file",
]

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 16


class UnsafeFileError(OSError):
    """The file exists but is not read: not a regular file, outside the workspace, or unreadable.

    ``transient`` is true for an open or read failure (worth retrying later), false for a refusal
    that only a change of the file can lift.
    """

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient

    def __str__(self) -> str:
        return self.message


class FileContent(msgspec.Struct, frozen=True):
    """The bytes read (at most the budget) and whether the file holds more."""

    data: bytes
    truncated: bool


def display_path(path: str) -> str:
    """``path`` printable and encodable as UTF-8 (undecodable bytes shown as escapes)."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text if text.isprintable() else repr(text)


def inside(path: str, boundary: str) -> bool:
    """Whether the (already resolved) ``path`` is ``boundary`` or below it."""
    base = boundary.rstrip("/") or "/"
    return path == base or path.startswith(base if base == "/" else base + "/")


def file_kind(mode: int) -> str:
    """What a non-regular, non-symlink file is, for a one-line error (``a FIFO``, ``a device``…)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def read_workspace_file(path: str, max_bytes: int, *, boundary: str | None) -> FileContent:
    """Read up to ``max_bytes`` of the regular file at ``path`` (see the module docstring).

    Raises ``FileNotFoundError`` when nothing is there (also a dangling symlink, or a parent
    that is not a directory) and
    :class:`UnsafeFileError` when the file is refused or cannot be read.
    """
    shown = display_path(path)
    real = os.path.realpath(path)
    if boundary is not None and not inside(real, os.path.realpath(boundary)):
        if not os.path.lexists(path):
            raise FileNotFoundError(errno.ENOENT, "no such file", path)
        raise UnsafeFileError(f"{shown} resolves outside the workspace; skipped")
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except NotADirectoryError:  # a parent is a file (``.git`` of a worktree): nothing there
        raise FileNotFoundError(errno.ENOENT, "no such file", path) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFileError(f"{shown} is a symlink loop; skipped") from None
        message = f"cannot read {shown}: {exc.strerror or exc}"
        raise UnsafeFileError(message, transient=True) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFileError(f"{shown} is {file_kind(mode)}; skipped")
        chunks: list[bytes] = []
        remaining = max_bytes + 1
        while remaining > 0:
            try:
                chunk = os.read(fd, min(_CHUNK, remaining))
            except OSError as exc:
                message = f"cannot read {shown}: {exc.strerror or exc}"
                raise UnsafeFileError(message, transient=True) from None
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        return FileContent(data[:max_bytes], truncated=True)
    return FileContent(data, truncated=False)
