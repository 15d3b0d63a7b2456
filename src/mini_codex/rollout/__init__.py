"""Rollout files: reading, decoding and reconstructing the append-only session log.

Re-exports only. ``replay``, ``entries``, ``lines`` and ``checkpoint`` are pure; ``reader`` and
``resume`` do file I/O.
"""

from mini_codex.rollout.checkpoint import (
    CHECKPOINT_KEY,
    CheckpointMeta,
    PreviousTurnSettings,
    WindowInfo,
    checkpoint_payload,
)
from mini_codex.rollout.lines import ReadStats, decode_line, decode_text
from mini_codex.rollout.reader import (
    RolloutFile,
    iter_lines_reverse,
    iter_raw_lines,
    iter_raw_lines_reverse,
    read_rollout,
)
from mini_codex.rollout.replay import (
    MALFORMED_CHECKPOINT,
    PATCH_WITHOUT_BASELINE,
    Reconstructed,
    reconstruct,
    reconstruct_from_newest,
)
from mini_codex.rollout.resume import load_resume_state, read_session_meta, replay_file

__all__ = [
    "CHECKPOINT_KEY",
    "MALFORMED_CHECKPOINT",
    "PATCH_WITHOUT_BASELINE",
    "CheckpointMeta",
    "PreviousTurnSettings",
    "ReadStats",
    "Reconstructed",
    "RolloutFile",
    "WindowInfo",
    "checkpoint_payload",
    "decode_line",
    "decode_text",
    "iter_lines_reverse",
    "iter_raw_lines",
    "iter_raw_lines_reverse",
    "load_resume_state",
    "read_rollout",
    "read_session_meta",
    "reconstruct",
    "reconstruct_from_newest",
    "replay_file",
]
