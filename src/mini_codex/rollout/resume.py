"""Reconstruct a session from a rollout path: tail-bounded resume and whole-file replay (I/O glue).

What belongs here: wiring the reader's raw line blocks (``reader.iter_raw_blocks_reverse``) to the
replay hot loop and the fold (``replay.reconstruct_lines``), plus the identity/schema read of the
file's first lines. What does not: the algorithm itself (``replay/``).

The cyclic garbage collector is off while the fold runs (and restored after, also on errors):
the fold makes no reference cycles, and a whole-file replay keeps hundreds of thousands of objects
alive, which would otherwise trigger full collections that find nothing.

:func:`load_resume_state` reads the file backwards and stops at the newest surviving checkpoint or
compaction whose tail decides the result, so its cost and memory follow the tail, not the file.
:func:`replay_file` scans the whole file (also backwards, keeping only the surviving tail in
memory) and counts every line. :func:`load_resume_state` reports the counters of the lines it read;
lines older than where its scan stopped are not read at all.

History is returned as recorded: a tool call left without an output (process killed mid-command)
is repaired when the next prompt is built (``context.normalize``), not here. Its items are
validated when first read (``history.History``); the replay proved each of them valid.
"""

from __future__ import annotations

import dataclasses
import gc
import os
from itertools import islice
from pathlib import Path
from typing import Any

from mini_codex.errors import RolloutError
from mini_codex.protocol import SessionMeta, SessionMetaLine
from mini_codex.rollout.reader import (
    check_header,
    check_schema,
    iter_raw_blocks_reverse,
    iter_raw_lines,
)
from mini_codex.rollout.replay import Reconstructed, reconstruct_lines
from mini_codex.rollout.replay.lines import INVALID_JSON, ReadStats, decode_line, parse_json

HEAD_LINES = 8
"""How many leading lines are searched for the identity-giving ``session_meta``."""


def missing_cwd_refusal(
    recorded: str | None, is_directory: bool, option: str = "--cd"
) -> str | None:
    """The one-line refusal to resume, by default, a session whose recorded cwd is gone (pure).

    ``recorded`` is the session's recorded cwd (None: none recorded), ``is_directory`` whether it
    is a directory now, ``option`` how the caller names the way to choose one (``--cd`` for the
    CLI and the UI, ``working_directory=`` for the SDK). None: nothing to refuse. Resuming in
    the process's directory instead would run the session somewhere it was never recorded
    (from ``$HOME``, past the refusal of a session recorded in the home directory)."""
    if recorded is None or is_directory:
        return None
    return (
        f"the session was recorded in {recorded}, which is not a directory any more; "
        f"pass {option} DIR to resume it elsewhere"
    )


def load_resume_state(path: str | os.PathLike[str]) -> Reconstructed:
    """The state a resumed session starts from, reading only the tail of the file."""
    return _reconstruct(Path(path), early_exit=True)


def replay_file(path: str | os.PathLike[str]) -> Reconstructed:
    """Reconstruct from the whole file (no early exit); same result as :func:`load_resume_state`."""
    return _reconstruct(Path(path), early_exit=False)


def last_token_info(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``info`` of the newest ``token_count`` event (token totals and context tokens survive
    a resume). Reads backwards from the end and stops at the first one found."""
    for block in iter_raw_blocks_reverse(Path(path)):
        for raw in block:
            if b'"token_count"' not in raw:
                continue
            obj = parse_json(raw)
            if not isinstance(obj, dict) or obj.get("type") != "event_msg":
                continue
            payload = obj.get("payload")
            if isinstance(payload, dict) and payload.get("type") == "token_count":
                info = payload.get("info")
                if isinstance(info, dict):
                    return info
    return None


def read_session_meta(path: str | os.PathLike[str]) -> SessionMeta | None:
    """The first ``session_meta`` among the file's first lines; refuses a newer schema.

    Raises ``RolloutError`` for an empty or unreadable file, ``NotARolloutError`` for a file
    that is not a rollout (so a resume never appends to it).
    """
    source = Path(path)
    check_header(source)
    meta: SessionMeta | None = None
    seen = False
    for _, raw in islice(iter_raw_lines(source), HEAD_LINES):
        seen = True
        obj = parse_json(raw)
        if obj is INVALID_JSON:
            continue
        line = decode_line(obj)
        if isinstance(line, SessionMetaLine):
            meta = line.payload
            break
    if not seen:
        raise RolloutError(f"empty session file: {source}")
    check_schema(meta, source)
    return meta


def _reconstruct(source: Path, *, early_exit: bool) -> Reconstructed:
    meta = read_session_meta(source)
    stats = ReadStats()
    collecting = gc.isenabled()
    gc.disable()
    try:
        # The fold may stop at a checkpoint; a whole-file replay still counts every line.
        result = reconstruct_lines(
            iter_raw_blocks_reverse(source),
            early_exit=early_exit,
            stats=stats,
            count_all=not early_exit,
        )
    finally:
        if collecting:
            gc.enable()
    warnings = list(result.warnings)
    if stats.bad_lines:
        warnings.insert(0, f"{stats.bad_lines} line(s) could not be decoded and were skipped")
    return dataclasses.replace(
        result, session_meta=meta, warnings=tuple(warnings), stats=stats.copy()
    )
