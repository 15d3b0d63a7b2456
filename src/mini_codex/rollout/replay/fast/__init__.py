"""The replay fast path: raw line text → the fold, equal to the slow path on any bytes (PURE).

One function, :func:`scan_lines`; its contract is checked by the law tests
(``tests/rollout/replay/test_replay_laws.py``, ``test_replay_fast_path.py``).
"""

from mini_codex.rollout.replay.fast.scan import scan_lines

__all__ = ["scan_lines"]
