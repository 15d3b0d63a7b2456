"""The reference replay of rollout bytes that the raw-line hot loop must equal (a test helper).

Each line is stripped, parsed with ``orjson``, classified (``classify.classify``) and folded
(``reconstruct_entries``): the slow, obviously-equivalent path, without ``raw_scan`` or the typed
decoders of ``typed_lines``.
"""

from __future__ import annotations

import orjson

from mini_codex.rollout import Reconstructed
from mini_codex.rollout.replay import reconstruct_entries
from mini_codex.rollout.replay.classify import classify
from mini_codex.rollout.replay.lines import ReadStats


def classified(data: bytes) -> Reconstructed:
    """Strip, parse, ``classify`` and fold each line of ``data`` (newest first)."""
    stats = ReadStats()
    entries = []
    for raw in reversed(data.splitlines()):
        line = raw.strip()
        if not line:
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            stats.lines += 1
            stats.bad_lines += 1
            continue
        if (entry := classify(obj, stats)) is not None:
            entries.append(entry)
    return reconstruct_entries(entries, early_exit=False, stats=stats)
