"""Where rollout files live and what their names mean (pure: no clock, no randomness, no I/O).

Layout (Codex's, spec §5.1)::

    <home>/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<thread uuid>.jsonl

The date and time are the *local* wall-clock time of creation, zero padded. A reverted Codex
thread whose rollout id differs from its thread id is named ``rollout-<ts>-<thread>_<rollout>``;
the reader also accepts a zstd-compressed ``.jsonl.zst`` sibling.

The home directory is an argument: only ``cli/`` reads ``$MINI_CODEX_HOME`` (default
``~/.mini-codex``). Thread ids are UUID v7 built from a caller-supplied time and randomness, so
this module stays deterministic and testable.

What does not belong here: creating directories or files (the recorder does that), scanning
directories (the session index does that).
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from pathlib import Path

import msgspec

__all__ = [
    "ROLLOUT_SUFFIXES",
    "RolloutFileName",
    "new_thread_id",
    "parse_rollout_filename",
    "rollout_path",
]

ROLLOUT_SUFFIXES = (".jsonl", ".jsonl.zst")
"""File name endings of rollout files, plain and zstd-compressed."""

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_NAME_RE = re.compile(
    r"rollout-(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})-(?P<thread>" + _UUID + r")"
    r"(?:_(?P<rollout>" + _UUID + r"))?(?P<suffix>\.jsonl(?:\.zst)?)"
)
_TS_FORMAT = "%Y-%m-%dT%H-%M-%S"
_UUID_FULL_RE = re.compile(_UUID)


class RolloutFileName(msgspec.Struct, frozen=True):
    """The parts of a rollout file name."""

    created: datetime
    """Local wall-clock creation time as written in the name (naive: the name has no zone)."""
    thread_id: str
    rollout_id: str | None
    """Set only for reverted Codex threads (``<thread>_<rollout>``)."""
    compressed: bool
    """True for ``.jsonl.zst``."""


def rollout_path(home: Path, created: datetime, thread_id: str) -> Path:
    """``home/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<thread_id>.jsonl``.

    ``created`` must be timezone-aware and already in the zone whose wall clock names the file
    (local time, like Codex); its fields are used as they are, not converted.
    """
    if created.tzinfo is None or created.utcoffset() is None:
        raise ValueError("rollout_path needs an aware local datetime, got a naive one")
    if _UUID_FULL_RE.fullmatch(thread_id) is None:
        raise ValueError(f"thread id is not a UUID: {thread_id!r}")
    day = home / "sessions" / f"{created.year:04d}" / f"{created.month:02d}" / f"{created.day:02d}"
    return day / f"rollout-{created.strftime(_TS_FORMAT)}-{thread_id}.jsonl"


def new_thread_id(now_ms: int, rand: bytes) -> str:
    """A UUID v7 (RFC 9562) from a Unix time in milliseconds and at least 10 random bytes.

    Layout: 48-bit big-endian milliseconds, version 7, 12 bits of ``rand_a``, variant ``10``,
    62 bits of ``rand_b``. Ids made later sort after ids made earlier (to the millisecond).
    """
    if not 0 <= now_ms < 1 << 48:
        raise ValueError(f"now_ms out of range for a UUID v7: {now_ms}")
    if len(rand) < 10:
        raise ValueError(f"new_thread_id needs at least 10 random bytes, got {len(rand)}")
    rand_a = int.from_bytes(rand[:2], "big") & 0x0FFF
    rand_b = int.from_bytes(rand[2:10], "big") & ((1 << 62) - 1)
    value = (now_ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=value))


def parse_rollout_filename(name: str) -> RolloutFileName | None:
    """Parse a rollout file's base name; ``None`` when it is not one."""
    match = _NAME_RE.fullmatch(name)
    if match is None:
        return None
    try:
        created = datetime.strptime(match["ts"], _TS_FORMAT)
    except ValueError:
        return None
    return RolloutFileName(
        created=created,
        thread_id=match["thread"].lower(),
        rollout_id=match["rollout"].lower() if match["rollout"] else None,
        compressed=match["suffix"].endswith(".zst"),
    )
