"""Rollout files: the append-only session log — writing, reading, reconstructing, checking.

Re-exports only. ``replay/`` is the pure core (decoding lines, the reconstruction fold, the
forward replay, the invariant checks); ``reader``, ``resume``, ``recorder``, ``locking``,
``index`` and ``paths`` are the file side (see docs/rollout.md, "Layout").
"""

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
