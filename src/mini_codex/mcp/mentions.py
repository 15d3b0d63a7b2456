"""``mcp://NAME`` mentions in user input: servers a step must wait for (spec §6.4). Pure.

A mention is ``mcp://`` followed by a server name (letters, digits, ``_``, ``-``, ``.``); a
trailing ``.`` (end of a sentence) is not part of the name. Only names of configured servers
matter; the caller intersects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["mentioned_servers"]

_MENTION = re.compile(r"mcp://([A-Za-z0-9_.-]+)")


def mentioned_servers(texts: Iterable[str]) -> frozenset[str]:
    """Every server name mentioned as ``mcp://NAME`` in ``texts``."""
    names: set[str] = set()
    for text in texts:
        for match in _MENTION.finditer(text):
            name = match.group(1).rstrip(".")
            if name:
                names.add(name)
    return frozenset(names)
