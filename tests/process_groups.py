"""Whether a process group still has live members (tests of tools that kill their groups).

Importable from every test module: ``tests/`` is on ``sys.path`` through ``tests/conftest.py``.
"""

from __future__ import annotations

from pathlib import Path

import anyio


def group_alive(pgid: int) -> bool:
    """Some process of group ``pgid`` is alive (zombies waiting for their reaper do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


async def group_gone(pgid: int) -> bool:
    """Group ``pgid`` ends within 5 s (SIGKILL is delivered asynchronously to orphans)."""
    for _ in range(100):
        if not group_alive(pgid):
            return True
        await anyio.sleep(0.05)
    return False
