"""Replay: the pure core of rollouts — decoding lines, the reconstruction fold, the checks (PURE).

Everything here is a function of bytes, JSON or typed lines: no files, no clock, no asyncio. The
I/O around it (reading files backwards, the recorder, the lock, the session index, resume) lives
one level up in ``mini_codex.rollout``.

Modules, in dependency order:

* ``lines`` — one line of text → a typed ``RolloutLine`` (tolerant: bad lines are counted).
* ``checkpoint``, ``history`` — checkpoint payloads and window identity; lazily validated history.
* ``exact``, ``entries``, ``classify`` — the replay view of a line
  (:data:`~mini_codex.rollout.replay.entries.Entry`) from typed lines, parsed JSON or raw text.
* ``baseline`` — the world-state baseline rules (spec §6.3) and the rollback rule (§6.1), once.
* ``fold`` — the reverse scan of spec §6.1 and the forward passes (history, baseline, window).
* ``fast`` — the raw-line hot loop and its typed msgspec decoders: feeds the fold exactly as
  the slow path would (P2).
* ``reconstruct`` — the entry points and the result (:class:`Reconstructed`).
* ``forward`` — the same rules in file order, with an observer (per-line baseline, segments,
  rollbacks), which ``verify``, ``rollout inspect`` and the session index build on.
* ``verify`` — the ordering invariants a file can show (I1, I3, I5, I6).
"""

from mini_codex.rollout.replay.baseline import Baseline, PendingRollback
from mini_codex.rollout.replay.checkpoint import PreviousTurnSettings, WindowInfo
from mini_codex.rollout.replay.fold import MALFORMED_CHECKPOINT, PATCH_WITHOUT_BASELINE, Fold
from mini_codex.rollout.replay.forward import (
    BaselineChange,
    ForwardReplay,
    ReplayObserver,
    TurnSegment,
)
from mini_codex.rollout.replay.reconstruct import (
    Reconstructed,
    reconstruct,
    reconstruct_entries,
    reconstruct_from_newest,
    reconstruct_lines,
)

__all__ = [
    "MALFORMED_CHECKPOINT",
    "PATCH_WITHOUT_BASELINE",
    "Baseline",
    "BaselineChange",
    "Fold",
    "ForwardReplay",
    "PendingRollback",
    "PreviousTurnSettings",
    "Reconstructed",
    "ReplayObserver",
    "TurnSegment",
    "WindowInfo",
    "reconstruct",
    "reconstruct_entries",
    "reconstruct_from_newest",
    "reconstruct_lines",
]
