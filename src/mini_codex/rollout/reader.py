"""Reading rollout files: forward and reverse line streams, typed and tolerant (I/O).

What belongs here: opening a rollout (``.jsonl`` or zstd-compressed ``.jsonl.zst``) and turning OS
errors into :class:`~mini_codex.errors.RolloutError` (the one boundary), streaming its non-blank
lines forward or newest first (in blocks from the end of the file, so a resume reads only the
tail), the typed whole-file read :func:`read_rollout`, and the schema gate. What does not: decoding
a line (``replay/lines.py``) and reconstruction (``replay/reconstruct.py``).

Tolerance (spec §5.4): bad JSON, unknown kinds and malformed payloads are counted and reported,
never fatal; a torn last line (a crash mid-write) is just a bad line. An empty file, a missing or
unreadable path, a directory, a FIFO or device (opened without blocking, refused), a file whose
first non-blank line is not a ``session_meta`` (``header.py``: ``PATH: not a rollout (why)``), and
a ``mini_codex_schema`` newer than this version are errors.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from mini_codex.errors import NotARolloutError, RolloutError, RolloutSchemaError
from mini_codex.protocol import MINI_CODEX_SCHEMA, RolloutLine, SessionMeta, SessionMetaLine
from mini_codex.rollout.header import MAX_HEADER_BYTES, header_problem
from mini_codex.rollout.replay.lines import INVALID_JSON, ReadStats, decode_line, parse_json

BLOCK_SIZE = 1 << 18
"""Bytes read per step when streaming a file backwards."""

ZSTD_SUFFIX = ".zst"


@dataclass(frozen=True)
class RolloutFile:
    """A whole rollout read forward: typed lines plus what the read found."""

    path: Path
    lines: tuple[RolloutLine, ...]
    stats: ReadStats = field(default_factory=ReadStats)
    warnings: tuple[str, ...] = ()
    session_meta: SessionMeta | None = None
    """The first ``session_meta`` (identity); later ones (copied by forks) are in ``lines``."""
    line_numbers: tuple[int, ...] = ()
    """The 1-based file line number of each entry of ``lines`` (same length)."""

    @property
    def thread_id(self) -> str | None:
        return self.session_meta.thread_id if self.session_meta is not None else None


def read_rollout(path: str | os.PathLike[str]) -> RolloutFile:
    """Read and decode a whole rollout file in order; refuses a file that is not a rollout."""
    source = Path(path)
    check_header(source)
    stats = ReadStats()
    warnings: list[str] = []
    lines: list[RolloutLine] = []
    numbers: list[int] = []
    for number, raw in iter_raw_lines(source, warnings):
        obj = parse_json(raw)
        if obj is INVALID_JSON:
            stats.lines += 1
            stats.bad_lines += 1
            warnings.append(f"line {number}: not valid JSON, skipped")
            continue
        bad_before = stats.bad_lines
        line = decode_line(obj, stats)
        if stats.bad_lines > bad_before:
            warnings.append(f"line {number}: does not decode as a rollout line, skipped")
        if line is not None:
            lines.append(line)
            numbers.append(number)
    if stats.lines == 0:
        raise RolloutError(f"empty session file: {source}")
    meta = first_session_meta(lines)
    check_schema(meta, source)
    return RolloutFile(source, tuple(lines), stats, tuple(warnings), meta, tuple(numbers))


def check_header(path: str | os.PathLike[str]) -> None:
    """Refuse a file that is not a rollout (``header.py``): ``PATH: not a rollout (why)``.

    An empty (or all-blank) file passes: it is reported as empty by the callers.
    """
    source = Path(path)
    if _is_zstd(source):
        first = next((raw for _, raw in iter_raw_lines(source)), None)
    else:
        first = _first_line(source)
    if first is None:
        return
    problem = header_problem(first)
    if problem is not None:
        raise NotARolloutError(f"{source}: not a rollout ({problem})")


def _first_line(source: Path) -> bytes | None:
    """The first non-blank line, stripped, read at most :data:`MAX_HEADER_BYTES` at a time."""
    with _open(source) as handle:
        while True:
            raw = handle.readline(MAX_HEADER_BYTES)
            if not raw:
                return None
            if len(raw) == MAX_HEADER_BYTES and not raw.endswith(b"\n"):
                raise NotARolloutError(
                    f"{source}: not a rollout (the first line is longer than "
                    f"{MAX_HEADER_BYTES} bytes)"
                )
            line = raw.strip()
            if line:
                return line


def first_session_meta(lines: Iterable[RolloutLine]) -> SessionMeta | None:
    """The payload of the first ``session_meta`` line (the thread identity)."""
    for line in lines:
        if isinstance(line, SessionMetaLine):
            return line.payload
    return None


def check_schema(meta: SessionMeta | None, path: Path) -> None:
    """Refuse a rollout written by a newer mini-codex schema."""
    version = meta.mini_codex_schema if meta is not None else None
    if version is not None and version > MINI_CODEX_SCHEMA:
        raise RolloutSchemaError(
            f"{path} was written with rollout schema {version}, but this mini-codex reads "
            f"schemas up to {MINI_CODEX_SCHEMA}; upgrade mini-codex to read it"
        )


def iter_lines_reverse(
    path: str | os.PathLike[str], stats: ReadStats | None = None
) -> Iterator[RolloutLine]:
    """Typed lines newest first; undecodable lines are counted into ``stats`` and skipped."""
    counted = ReadStats() if stats is None else stats
    for raw in iter_raw_lines_reverse(path):
        obj = parse_json(raw)
        if obj is INVALID_JSON:
            counted.lines += 1
            counted.bad_lines += 1
            continue
        line = decode_line(obj, counted)
        if line is not None:
            yield line


# --- raw line streams -----------------------------------------------------------------------------


def iter_raw_lines(
    path: str | os.PathLike[str], warnings: list[str] | None = None
) -> Iterator[tuple[int, bytes]]:
    """Non-blank lines in file order, with their 1-based line numbers."""
    source = Path(path)
    with _open(source) as handle:
        compressed = _is_zstd(source)
        stream = _decompressed(handle, source) if compressed else handle
        # An uncompressed file never imports zstandard (an ``except`` expression is evaluated
        # for any exception that reaches it, the GeneratorExit of a reader that stops included).
        corrupt = _zstd_error() if compressed else _NeverRaised
        number = 0
        try:
            for number, raw in enumerate(stream, start=1):
                line = raw.strip()
                if line:
                    yield number, line
        except corrupt as error:
            if number == 0:
                raise RolloutError(f"cannot decompress rollout file {source}: {error}") from None
            # Keep what was readable before the damage (never lose recorded data).
            if warnings is not None:
                warnings.append(f"{source}: compressed stream is corrupt after line {number}")


def iter_raw_lines_reverse(
    path: str | os.PathLike[str], block_size: int = BLOCK_SIZE
) -> Iterator[bytes]:
    """Non-blank lines newest first, stripped, reading the file backwards in blocks.

    Compressed files cannot be read backwards: they are read forward and reversed in memory.
    """
    for block in iter_raw_blocks_reverse(path, block_size):
        for raw in block:
            line = raw.strip()
            if line:
                yield line


def iter_raw_blocks_reverse(
    path: str | os.PathLike[str], block_size: int = BLOCK_SIZE
) -> Iterator[list[bytes]]:
    """The file's lines newest first, a list per block read (the replay hot path).

    Lines are not stripped (they keep their newline) nor filtered (blank ones are included), so
    a consumer strips them (or lets the JSON parser skip whitespace) and skips blanks. A line
    longer than a block is assembled from its pieces without quadratic copying.
    """
    source = Path(path)
    if _is_zstd(source):
        lines = [raw for _, raw in iter_raw_lines(source)]
        lines.reverse()
        yield lines
        return
    with _open(source) as handle:
        position = handle.seek(0, os.SEEK_END)
        pieces: list[bytes] = []  # the line being assembled (its start not read yet), right first
        while position > 0:
            step = min(block_size, position)
            position -= step
            handle.seek(position)
            block = handle.read(step)
            if b"\n" not in block:  # the block lies inside one line
                pieces.append(block)
                continue
            lines = io.BytesIO(block).readlines()  # splits at newlines, keeping them (memchr)
            if pieces:  # the line that continues right of the block
                right = pieces[0] if len(pieces) == 1 else b"".join(reversed(pieces))
                if lines[-1].endswith(b"\n"):
                    lines.append(right)
                else:
                    lines[-1] += right
            pieces = [lines[0]]  # the end of a line that starts left of the block
            yield lines[:0:-1]
        if pieces:
            yield [pieces[0] if len(pieces) == 1 else b"".join(reversed(pieces))]


@contextmanager
def _open(path: Path) -> Iterator[IO[bytes]]:
    """Open a regular file for binary reading, translating OS errors into RolloutError.

    ``O_NONBLOCK``: a FIFO or a device given as a rollout path is refused, never waited on.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise RolloutError(f"rollout file not found: {path}") from None
    except IsADirectoryError:
        raise RolloutError(f"rollout path is a directory, not a file: {path}") from None
    except PermissionError:
        raise RolloutError(f"cannot read rollout file (permission denied): {path}") from None
    except OSError as error:
        raise RolloutError(f"cannot read rollout file {path}: {error.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise RolloutError(f"rollout path is a directory, not a file: {path}")
        raise RolloutError(f"{path}: not a rollout (not a regular file)")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        try:
            yield handle
        except OSError as error:
            raise RolloutError(f"error reading rollout file {path}: {error.strerror}") from None


def _is_zstd(path: Path) -> bool:
    return path.name.endswith(ZSTD_SUFFIX)


def _decompressed(handle: IO[bytes], path: Path) -> Iterator[bytes]:
    try:
        import zstandard
    except ImportError:
        raise RolloutError(
            f"reading {path} needs the 'zstandard' package (install mini-codex[zstd])"
        ) from None
    reader = zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True)
    pieces: list[bytes] = []  # the line being assembled
    while chunk := reader.read(BLOCK_SIZE):
        start = 0
        while (cut := chunk.find(b"\n", start)) != -1:
            pieces.append(chunk[start:cut])
            yield b"".join(pieces)
            pieces.clear()
            start = cut + 1
        pieces.append(chunk[start:])
    last = b"".join(pieces)
    if last:
        yield last


def _zstd_error() -> type[Exception]:
    try:
        import zstandard
    except ImportError:
        return _NeverRaised
    return zstandard.ZstdError


class _NeverRaised(Exception):
    """Stands in for ``zstandard.ZstdError`` when zstandard is not installed."""
