"""Rollout files: the append-only session log — writing, reading, reconstructing, checking.

Re-exports only. ``replay/`` is the pure core (decoding lines, the reconstruction fold, the
forward replay, the invariant checks); ``reader``, ``resume``, ``recorder``, ``locking``,
``index`` and ``paths`` are the file side (see docs/rollout.md, "Layout").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex._lazy import lazy_exports

if TYPE_CHECKING:
    from mini_codex.rollout.index import INDEX_FILENAME, RefreshResult, SessionIndex, SessionInfo
    from mini_codex.rollout.locking import LockedRolloutFile
    from mini_codex.rollout.paths import (
        ROLLOUT_SUFFIXES,
        RolloutFileName,
        new_thread_id,
        parse_rollout_filename,
        rollout_path,
    )
    from mini_codex.rollout.reader import (
        RolloutFile,
        iter_lines_reverse,
        iter_raw_lines,
        iter_raw_lines_reverse,
        read_rollout,
    )
    from mini_codex.rollout.recorder import Clock, RecorderOptions, RolloutRecorder
    from mini_codex.rollout.replay import (
        MALFORMED_CHECKPOINT,
        PATCH_WITHOUT_BASELINE,
        Reconstructed,
        reconstruct,
        reconstruct_from_newest,
    )
    from mini_codex.rollout.replay.checkpoint import (
        CHECKPOINT_KEY,
        CheckpointMeta,
        PreviousTurnSettings,
        WindowInfo,
        checkpoint_payload,
    )
    from mini_codex.rollout.replay.lines import ReadStats, decode_line, decode_text
    from mini_codex.rollout.replay.verify import (
        Invariant,
        VerifyResult,
        Violation,
        check_rollout,
        verify_rollout,
    )
    from mini_codex.rollout.resume import load_resume_state, read_session_meta, replay_file

__all__ = [
    "CHECKPOINT_KEY",
    "INDEX_FILENAME",
    "MALFORMED_CHECKPOINT",
    "PATCH_WITHOUT_BASELINE",
    "ROLLOUT_SUFFIXES",
    "CheckpointMeta",
    "Clock",
    "Invariant",
    "LockedRolloutFile",
    "PreviousTurnSettings",
    "ReadStats",
    "Reconstructed",
    "RecorderOptions",
    "RefreshResult",
    "RolloutFile",
    "RolloutFileName",
    "RolloutRecorder",
    "SessionIndex",
    "SessionInfo",
    "VerifyResult",
    "Violation",
    "WindowInfo",
    "check_rollout",
    "checkpoint_payload",
    "decode_line",
    "decode_text",
    "iter_lines_reverse",
    "iter_raw_lines",
    "iter_raw_lines_reverse",
    "load_resume_state",
    "new_thread_id",
    "parse_rollout_filename",
    "read_rollout",
    "read_session_meta",
    "reconstruct",
    "reconstruct_from_newest",
    "replay_file",
    "rollout_path",
    "verify_rollout",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "INDEX_FILENAME": "mini_codex.rollout.index",
        "RefreshResult": "mini_codex.rollout.index",
        "SessionIndex": "mini_codex.rollout.index",
        "SessionInfo": "mini_codex.rollout.index",
        "LockedRolloutFile": "mini_codex.rollout.locking",
        "ROLLOUT_SUFFIXES": "mini_codex.rollout.paths",
        "RolloutFileName": "mini_codex.rollout.paths",
        "new_thread_id": "mini_codex.rollout.paths",
        "parse_rollout_filename": "mini_codex.rollout.paths",
        "rollout_path": "mini_codex.rollout.paths",
        "RolloutFile": "mini_codex.rollout.reader",
        "iter_lines_reverse": "mini_codex.rollout.reader",
        "iter_raw_lines": "mini_codex.rollout.reader",
        "iter_raw_lines_reverse": "mini_codex.rollout.reader",
        "read_rollout": "mini_codex.rollout.reader",
        "Clock": "mini_codex.rollout.recorder",
        "RecorderOptions": "mini_codex.rollout.recorder",
        "RolloutRecorder": "mini_codex.rollout.recorder",
        "MALFORMED_CHECKPOINT": "mini_codex.rollout.replay",
        "PATCH_WITHOUT_BASELINE": "mini_codex.rollout.replay",
        "Reconstructed": "mini_codex.rollout.replay",
        "reconstruct": "mini_codex.rollout.replay",
        "reconstruct_from_newest": "mini_codex.rollout.replay",
        "CHECKPOINT_KEY": "mini_codex.rollout.replay.checkpoint",
        "CheckpointMeta": "mini_codex.rollout.replay.checkpoint",
        "PreviousTurnSettings": "mini_codex.rollout.replay.checkpoint",
        "WindowInfo": "mini_codex.rollout.replay.checkpoint",
        "checkpoint_payload": "mini_codex.rollout.replay.checkpoint",
        "ReadStats": "mini_codex.rollout.replay.lines",
        "decode_line": "mini_codex.rollout.replay.lines",
        "decode_text": "mini_codex.rollout.replay.lines",
        "Invariant": "mini_codex.rollout.replay.verify",
        "VerifyResult": "mini_codex.rollout.replay.verify",
        "Violation": "mini_codex.rollout.replay.verify",
        "check_rollout": "mini_codex.rollout.replay.verify",
        "verify_rollout": "mini_codex.rollout.replay.verify",
        "load_resume_state": "mini_codex.rollout.resume",
        "read_session_meta": "mini_codex.rollout.resume",
        "replay_file": "mini_codex.rollout.resume",
    },
)
