"""Compiled git ignore rules for the workspace scanner.

What belongs here: turning the text of one ignore file (a ``.gitignore``, ``.git/info/exclude``
or a list of extra patterns) into an :class:`IgnoreRules` object that answers "does this file
decide about this path, and how?", and :func:`decide`, which applies a chain of such files with
git's precedence (the nearest ``.gitignore`` first). Matching itself is ``pathspec``'s
``GitIgnoreSpec``; this module only adds a fast negative pre-check, because most paths in a
workspace match no pattern at all and ``GitIgnoreSpec.check_file`` costs ~9 µs per call here.

What does not belong here: walking directories or reading files (``workspace.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from pathspec import GitIgnoreSpec

__all__ = ["IgnoreRules", "RuleChain", "decide"]

_FLOATING_PREFIX: Final = "^(?:.+/)?"
"""How pathspec compiles a pattern without an inner slash: it may match at any depth."""
_NAMED_GROUP: Final = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


class IgnoreRules:
    """The patterns of one ignore file, matched against paths relative to its directory.

    Directory paths must end with ``/`` (so directory-only patterns such as ``build/`` apply).
    """

    __slots__ = ("_prefilter", "_spec", "empty")

    def __init__(self, lines: Iterable[str]) -> None:
        self._spec = GitIgnoreSpec.from_lines(list(lines))
        active = [p for p in self._spec.patterns if p.include is not None]
        self.empty: bool = not active
        self._prefilter = _compile_prefilter([p.regex for p in active if p.regex is not None])

    @classmethod
    def from_bytes(cls, data: bytes) -> IgnoreRules:
        return cls(data.decode("utf-8", errors="replace").splitlines())

    def check(self, path: str) -> bool | None:
        """True: ignored; False: re-included by a negation; None: no pattern matches."""
        if self.empty:
            return None
        if self._prefilter is not None and self._prefilter(path) is None:
            return None
        include: bool | None = self._spec.check_file(path).include
        return include


RuleChain = tuple[tuple[str, IgnoreRules], ...]
"""``(directory, rules)`` pairs, nearest directory first; ``""`` is the workspace root."""


def decide(path: str, is_dir: bool, chain: RuleChain) -> bool | None:
    """Git's verdict for a root-relative ``path`` from a chain of ignore files, or None.

    The nearest ignore file that has an opinion wins (a deeper ``.gitignore`` overrides a
    shallower one), as in git.
    """
    suffix = "/" if is_dir else ""
    for base, rules in chain:
        relative = path[len(base) + 1 :] if base else path
        verdict = rules.check(relative + suffix)
        if verdict is not None:
            return verdict
    return None


def _compile_prefilter(regexes: Sequence[re.Pattern[str]]) -> Callable[[str], object] | None:
    """One regex that matches exactly when at least one of ``patterns`` matches.

    Floating patterns share one ``(?:.+/)?`` prefix, so the slash positions are tried once for
    all of them instead of once per pattern. Returns None (always run the full check) if the
    regexes do not have the expected shape.
    """
    if not regexes:
        return None
    floating: list[str] = []
    anchored: list[str] = []
    for regex in regexes:
        if not isinstance(regex.pattern, str) or regex.flags != re.UNICODE:
            return None
        plain = _NAMED_GROUP.sub("(?:", regex.pattern)
        if plain.startswith(_FLOATING_PREFIX):
            floating.append(plain[len(_FLOATING_PREFIX) :])
        elif plain.startswith("^"):
            anchored.append(plain[1:])
        else:
            return None
    alternatives = [f"(?:{a})" for a in anchored]
    if floating:
        alternatives.append("(?:.+/)?(?:" + "|".join(f"(?:{f})" for f in floating) + ")")
    try:
        return re.compile("^(?:" + "|".join(alternatives) + ")").match
    except re.error:
        return None
