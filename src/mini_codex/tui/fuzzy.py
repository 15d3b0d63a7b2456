"""Fuzzy matching for ``@`` file mentions: subsequence match, scored (pure)."""

from __future__ import annotations

from collections.abc import Iterable


def score(query: str, path: str) -> int | None:
    """None when ``query``'s characters are not a subsequence of ``path`` (case-insensitive);
    else a score, lower is better: gaps between matched characters, a bonus for matching in the
    file name, and the path length as the tie-break."""
    q = query.lower()
    p = path.lower()
    if not q:
        return len(p)
    position = -1
    gaps = 0
    for char in q:
        found = p.find(char, position + 1)
        if found < 0:
            return None
        if position >= 0:
            gaps += found - position - 1
        position = found
    if q in p:  # a contiguous match beats the greedy one's gaps
        gaps = 0
    name_start = p.rfind("/") + 1
    in_name = 0 if q in p[name_start:] else 50
    return gaps * 10 + in_name + len(p)


def best_matches(query: str, paths: Iterable[str], limit: int = 8) -> list[str]:
    scored = [(s, path) for path in paths if (s := score(query, path)) is not None]
    scored.sort()
    return [path for _, path in scored[:limit]]
