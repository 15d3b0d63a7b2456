"""Reading a rollout for the inspector: whole, or in windows that start at a checkpoint.

What belongs here: raw lines with their byte offsets, the window of a large file that starts at
its newest compaction or checkpoint (found by reading backwards, so opening a 1M-line file costs
the tail, not the file), and the previous window for paging. What does not: what the lines mean
(``session_view.py``), replay rules (``rollout/replay``). Read-only: files are never written.

A file up to :data:`WHOLE_FILE_BYTES` is read whole (exact line numbers). A larger plain file is
read in windows: a window starts at a ``compacted`` line (a compaction or a checkpoint, after
which the history and the world-state baseline are restored from the file itself) and ends where
the next window starts. Its lines carry byte offsets, and line numbers when the window starts
within :data:`NUMBERED_PREFIX_BYTES` (newlines before it are counted). Compressed files
(``.jsonl.zst``) are always read whole; their lines' "offsets" are their line numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mini_codex.protocol import RolloutLine, TurnContextLine
from mini_codex.rollout.reader import (
    ZSTD_SUFFIX,
    check_header,
    check_schema,
    first_session_meta,
    iter_raw_lines,
)
from mini_codex.rollout.replay.lines import INVALID_JSON, ReadStats, decode_line, parse_json
from mini_codex.web.view_model import LineRef

__all__ = ["MAX_LINE_BYTES", "WHOLE_FILE_BYTES", "LongLine", "Window", "line_start", "read_window"]

WHOLE_FILE_BYTES = 4 * 1024 * 1024
"""Files up to this size are read whole; larger ones in checkpoint windows."""
NUMBERED_PREFIX_BYTES = 64 * 1024 * 1024
"""A window starting this far into a file or less gets line numbers (newlines are counted)."""
MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longer lines are not read (a window lists them; ``/lines/OFFSET`` streams one)."""
_BLOCK = 1 << 20
_COMPACTED = b'"type":"compacted"'
_HEAD = 64 * 1024


@dataclass(frozen=True)
class Window:
    """Decoded lines of a file (or of one window of it)."""

    lines: tuple[RolloutLine, ...]
    refs: tuple[LineRef, ...]
    stats: ReadStats
    warnings: tuple[str, ...]
    start: int
    """Byte offset of the window's first line (0: the file start)."""
    end: int
    """Byte offset just past the window's last complete line."""
    previous: int | None
    """Start of the window before this one (None: this is the first)."""
    size: int
    whole: bool
    long_lines: tuple[LongLine, ...] = ()
    """Lines longer than :data:`MAX_LINE_BYTES`, skipped unread."""


@dataclass(frozen=True)
class LongLine:
    offset: int
    line: int | None
    bytes: int


def _skip_line(handle: BinaryIO, offset: int, end: int) -> int:
    """Read past the rest of the line at the handle's position (in blocks, keeping none)."""
    while offset < end:
        block = handle.read(min(_BLOCK, end - offset))
        if not block:
            break
        newline = block.find(b"\n")
        if newline >= 0:
            offset += newline + 1
            handle.seek(offset)
            return offset
        offset += len(block)
    return offset


def line_start(path: Path, offset: int) -> bool:
    """Whether a line of ``path`` starts at byte ``offset`` (plain files)."""
    if offset == 0:
        return True
    with path.open("rb") as handle:
        handle.seek(offset - 1)
        return handle.read(1) == b"\n"


def read_window(
    path: Path, before: int | None = None, *, whole_limit: int = WHOLE_FILE_BYTES
) -> Window:
    """The window ending at ``before`` (default: the end of the file, i.e. the newest window).

    A file of at most ``whole_limit`` bytes is one window (read whole)."""
    check_header(path)  # not a rollout (or a FIFO, a device): one clear error, nothing read
    if path.name.endswith(ZSTD_SUFFIX):
        return _read_compressed(path)
    size = path.stat().st_size
    if size <= whole_limit:
        return _decode(path, 0, size, None, size, first_line=1)
    end = size if before is None else max(0, min(before, size))
    start = _compaction_before(path, end)
    previous = _compaction_before(path, start) if start > 0 else None
    return _decode(path, start, end, previous, size, first_line=_line_at(path, start))


def read_window_at(path: Path, offset: int, *, whole_limit: int = WHOLE_FILE_BYTES) -> Window:
    """The window holding the line at byte ``offset``."""
    check_header(path)
    if path.name.endswith(ZSTD_SUFFIX):
        return _read_compressed(path)
    size = path.stat().st_size
    if size <= whole_limit:
        return _decode(path, 0, size, None, size, first_line=1)
    start = _compaction_before(path, min(offset, size) + 1)
    end = _compaction_after(path, start, size)
    previous = _compaction_before(path, start) if start > 0 else None
    return _decode(path, start, end, previous, size, first_line=_line_at(path, start))


def read_first_line(path: Path) -> RolloutLine | None:
    """The file's first line, decoded (the ``session_meta`` of a window read from the middle)."""
    with path.open("rb") as handle:
        first = handle.readline(MAX_LINE_BYTES)
    return decode_raw(first, ReadStats()) if first.strip() else None


def first_model(path: Path, limit: int = _BLOCK) -> str | None:
    """The model of the first ``turn_context`` in the first ``limit`` bytes (the session list)."""
    if path.name.endswith(ZSTD_SUFFIX):
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(limit)
    except OSError:
        return None
    for raw in head.splitlines():
        if b'"turn_context"' in raw[:200]:
            line = decode_raw(raw, ReadStats())
            if isinstance(line, TurnContextLine) and line.payload.model:
                return line.payload.model
    return None


def decode_raw(raw: bytes, stats: ReadStats) -> RolloutLine | None:
    obj = parse_json(raw)
    if obj is INVALID_JSON:
        stats.lines += 1
        stats.bad_lines += 1
        return None
    return decode_line(obj, stats)


def _decode_warned(
    raw: bytes, stats: ReadStats, warnings: list[str], label: str
) -> RolloutLine | None:
    """``decode_raw``, with a warning under ``label`` when ``raw`` is not a rollout line."""
    bad = stats.bad_lines
    line = decode_raw(raw, stats)
    if stats.bad_lines > bad:
        warnings.append(f"{label}: not a valid rollout line, skipped")
    return line


def _line_at(path: Path, offset: int) -> int | None:
    """The 1-based number of the line starting at ``offset`` (None: too far in to count)."""
    if offset > NUMBERED_PREFIX_BYTES:
        return None
    count = 0
    with path.open("rb") as handle:
        remaining = offset
        while remaining > 0:
            block = handle.read(min(_BLOCK * 8, remaining))
            if not block:
                break
            count += block.count(b"\n")
            remaining -= len(block)
    return count + 1


def _decode(
    path: Path, start: int, end: int, previous: int | None, size: int, *, first_line: int | None
) -> Window:
    stats = ReadStats()
    warnings: list[str] = []
    lines: list[RolloutLine] = []
    refs: list[LineRef] = []
    long_lines: list[LongLine] = []
    offset = start
    numbered = first_line is not None
    number = (first_line or 1) - 1
    with path.open("rb") as handle:
        handle.seek(start)
        while offset < end:
            raw = handle.readline(min(MAX_LINE_BYTES + 1, end - offset))
            if not raw:
                break
            number += 1
            here = offset
            offset += len(raw)
            label = f"line {number}" if numbered else f"offset {here}"
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                # Not read: its bytes are skipped without keeping them (its text: /lines/OFFSET).
                offset = _skip_line(handle, offset, end)
                long_lines.append(LongLine(here, number if numbered else None, offset - here))
                warnings.append(
                    f"{label}: {offset - here} bytes, longer than the inspector reads "
                    f"({MAX_LINE_BYTES} bytes), skipped"
                )
                continue
            if not raw.strip():
                continue
            line = _decode_warned(raw, stats, warnings, label)
            if line is not None:
                lines.append(line)
                refs.append(LineRef(here, number if numbered else None))
    if start == 0:
        if stats.lines == 0:
            from mini_codex.errors import RolloutError

            raise RolloutError(f"empty session file: {path}")
        check_schema(first_session_meta(lines), path)
    return Window(
        tuple(lines),
        tuple(refs),
        stats,
        tuple(warnings),
        start,
        offset,
        previous,
        size,
        start == 0 and offset >= size,
        tuple(long_lines),
    )


def _read_compressed(path: Path) -> Window:
    stats = ReadStats()
    warnings: list[str] = []
    lines: list[RolloutLine] = []
    refs: list[LineRef] = []
    offset = 0
    for number, raw in iter_raw_lines(path, warnings):
        line = _decode_warned(raw, stats, warnings, f"line {number}")
        if line is not None:
            lines.append(line)
            refs.append(LineRef(number, number))
        offset = number
    check_schema(first_session_meta(lines), path)
    size = path.stat().st_size
    return Window(tuple(lines), tuple(refs), stats, tuple(warnings), 0, offset, None, size, True)


def _compaction_before(path: Path, end: int) -> int:
    """Byte offset of the newest ``compacted`` line starting before ``end`` (0 if none).

    Read backwards in blocks. Only whole lines are searched: the line a block starts inside is
    carried to the next (earlier) block, but only its first :data:`_HEAD` bytes (its envelope
    ``type`` is there), so a line of any length costs one pass."""
    with path.open("rb") as handle:
        position = end
        carry = b""
        while position > 0:
            step = min(_BLOCK, position)
            position -= step
            handle.seek(position)
            block = handle.read(step)
            data = block + carry
            first_newline = block.find(b"\n") if position > 0 else -1
            if position > 0 and first_newline < 0:
                carry = data[:_HEAD]  # the whole block is inside one line
                continue
            base = position + first_newline + 1
            found = _last_compacted_line(data[first_newline + 1 :], base, end)
            if found is not None:
                return found
            carry = data[: first_newline + 1][:_HEAD]
        return 0


def _compaction_after(path: Path, start: int, size: int) -> int:
    """Byte offset of the first ``compacted`` line after the one at ``start`` (``size``: none).

    Lines are read with a bounded ``readline``; only a line's head is looked at."""
    with path.open("rb") as handle:
        handle.seek(start)
        position = start
        first = True
        while position < size:
            raw = handle.readline(_HEAD)
            if not raw:
                break
            here = position
            position += len(raw)
            if not raw.endswith(b"\n"):
                position = _skip_line(handle, position, size)
            if first:
                first = False
                continue
            head = raw[: raw.find(b'"payload"')] if b'"payload"' in raw else raw[:200]
            if _COMPACTED in head:
                return here
        return size


def _last_compacted_line(block: bytes, base: int, end: int) -> int | None:
    index = len(block)
    while True:
        index = block.rfind(_COMPACTED, 0, index)
        if index < 0:
            return None
        line_start = block.rfind(b"\n", 0, index) + 1
        if base + line_start < end and block[line_start:index].lstrip().startswith(b"{"):
            head = block[line_start:index]
            if b'"payload"' not in head:  # the envelope's own type, not a nested one
                return base + line_start
        index = line_start
