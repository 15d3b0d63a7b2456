"""Compiled git ignore rules for the workspace scanner.

What belongs here: turning the text of one ignore file (a ``.gitignore``, ``.git/info/exclude``
or a list of extra patterns) into an :class:`IgnoreRules` object that answers "does this file
decide about this path, and how?", and :func:`decide`, which applies a chain of such files with
git's precedence (the nearest ``.gitignore`` first). Matching itself is ``pathspec``'s
``GitIgnoreSpec``; this module only decides which patterns can match a path at all, because
most paths match no pattern and ``GitIgnoreSpec.check_file`` costs ~9 µs per call and pattern.

Hostile files (the model writes ``.gitignore``) stay cheap: pattern lines longer than
:data:`MAX_PATTERN_BYTES` are skipped with a note, repeated lines collapse, and patterns without
wildcards (``name``, ``dir/``, ``/a/b``), of the form ``*.ext``, or wildcard patterns for one
component that start with two literal characters (``tmp_*``) — what generated ignore files are
made of — are filed in dictionaries under a key every matching path must contain; they are
compiled only when a path hits their key. Only the remaining wildcard patterns are compiled up
front (~0.1 ms each) and pre-checked by combined regexes. At most :data:`MAX_WILDCARD_PATTERNS`
wildcard patterns (lazily compiled or not) are used per file; the rest are skipped with a note.
A path is then decided by ``GitIgnoreSpec`` over just the patterns that can match it, in file
order, which gives the same verdict as over all of them (patterns that do not match a path do not
change its verdict).

What does not belong here: walking directories or reading files (``workspace.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # pathspec (~30 ms) is imported when a pattern is first compiled
    from pathspec import GitIgnoreSpec
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

__all__ = [
    "MAX_IGNORE_FILE_BYTES",
    "MAX_PATTERN_BYTES",
    "MAX_WILDCARD_PATTERNS",
    "IgnoreRules",
    "RuleChain",
    "decide",
]

MAX_IGNORE_FILE_BYTES: Final = 1 << 20
"""How much of one ignore file is read; later lines are ignored with a note."""
MAX_PATTERN_BYTES: Final = 4096
"""Longer pattern lines are skipped: no path on Linux is that long (PATH_MAX)."""
MAX_WILDCARD_PATTERNS: Final = 2000
"""Wildcard patterns are compiled up front (~0.1 ms each) and tried on every path; more than
this many in one file (no real ignore file has them) are skipped with a note."""
_SPEC_CACHE_SIZE: Final = 256
_PARENT_CACHE_SIZE: Final = 4096
_PREFILTER_CHUNK: Final = 512

_SEGMENT: Final = r"[A-Za-z0-9._+@=,%~-]+"
_LITERAL: Final = re.compile(
    rf"(?P<lead>/)?(?P<name>\*\.[A-Za-z0-9_+@=,%~-]+|{_SEGMENT}(?:/{_SEGMENT})*)/?"
)
"""A pattern without wildcards or escapes (``name``, ``dir/``, ``/a/b``), or ``*.ext``."""
_DOT_SEGMENT: Final = re.compile(r"(?:^|/)\.{1,2}(?:/|$)")
_HEADED: Final = re.compile(r"(?P<head>[A-Za-z0-9._+@=,%~-]{2})[^/\\]*/?")
"""A one-component pattern (no slash but a trailing one) starting with two literal characters."""

_FLOATING_PREFIX: Final = "^(?:.+/)?"
"""How pathspec compiles a pattern without an inner slash: it may match at any depth."""
_NAMED_GROUP: Final = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


class IgnoreRules:
    """The patterns of one ignore file, matched against paths relative to its directory.

    Directory paths must end with ``/`` (so directory-only patterns such as ``build/`` apply).
    Building is linear in the number of lines (each bounded by :data:`MAX_PATTERN_BYTES`), and a
    lookup costs a few dictionary probes plus one regex call, however many patterns there are.
    """

    __slots__ = (
        "_by_head",
        "_by_name",
        "_by_prefix",
        "_by_suffix",
        "_compiled",
        "_general",
        "_lines",
        "_parents",
        "_prefilter",
        "_specs",
        "empty",
        "notes",
    )

    def __init__(self, lines: Iterable[str], notes: Sequence[str] = ()) -> None:
        kept: list[str] = []
        too_long = 0
        for line in lines:
            if not line.strip() or line.startswith("#"):
                continue
            if len(line) > MAX_PATTERN_BYTES:
                too_long += 1
                continue
            if kept and kept[-1] == line:
                continue  # a repeated pattern decides nothing new
            kept.append(line)
        self._lines = kept
        self._compiled: dict[int, GitIgnoreSpecPattern] = {}
        self._specs: dict[tuple[int, ...], GitIgnoreSpec] = {}
        self._parents: dict[str, tuple[int, ...]] = {}
        self._by_name: dict[str, list[int]] = {}
        self._by_prefix: dict[str, list[int]] = {}
        self._by_suffix: dict[str, list[int]] = {}
        self._by_head: dict[str, list[int]] = {}
        self._general: list[int] = []
        general_regexes: dict[str, re.Pattern[str]] = {}
        invalid = over_limit = wildcards = 0
        for index, line in enumerate(kept):
            if self._index_literal(index, line):
                continue
            if wildcards >= MAX_WILDCARD_PATTERNS:
                over_limit += 1
                continue
            wildcards += 1
            if self._index_headed(index, line):
                continue
            try:
                pattern = self._pattern(index)
            except ValueError:  # pathspec's GitIgnorePatternError: git ignores such a line too
                invalid += 1
                continue
            if pattern.include is None or pattern.regex is None:
                continue
            self._general.append(index)
            general_regexes.setdefault(pattern.regex.pattern, pattern.regex)
        indexed = self._by_name or self._by_prefix or self._by_suffix or self._by_head
        self.empty: bool = not (self._general or indexed)
        self._prefilter = _compile_prefilter(list(general_regexes.values()))
        notes = list(notes)
        if invalid:
            notes.append(f"{invalid} invalid pattern line(s) ignored")
        if over_limit:
            notes.append(
                f"{over_limit} wildcard pattern(s) after the first {MAX_WILDCARD_PATTERNS} ignored"
            )
        if too_long:
            notes.append(
                f"{too_long} line(s) longer than {MAX_PATTERN_BYTES} bytes ignored (no such path)"
            )
        self.notes: tuple[str, ...] = tuple(notes)

    @classmethod
    def from_bytes(cls, data: bytes, *, truncated: bool = False) -> IgnoreRules:
        """Rules from the bytes of an ignore file; ``truncated``: the file held more.

        The incomplete line at the cut of a truncated file is dropped, and a note says so.
        """
        notes: list[str] = []
        if truncated:
            read = len(data)
            cut = data.rfind(b"\n")
            data = data[: cut + 1] if cut >= 0 else b""
            notes.append(f"larger than {read} bytes: lines after byte {len(data)} ignored")
        return cls(data.decode("utf-8", errors="replace").splitlines(), notes)

    def check(self, path: str) -> bool | None:
        """True: ignored; False: re-included by a negation; None: no pattern matches."""
        if self.empty:
            return None
        bare = path[:-1] if path.endswith("/") else path
        parent, _, name = bare.rpartition("/")
        inherited = self._parent_hits(parent) if parent else ()
        hits = [*inherited, *self._component_hits(name, bare)]
        if self._general and (self._prefilter is None or self._prefilter(path) is not None):
            hits.extend(self._general)
        if not hits:
            return None
        key = tuple(sorted(set(hits)))
        spec = self._specs.get(key)
        if spec is None:
            if len(self._specs) >= _SPEC_CACHE_SIZE:
                self._specs.clear()
            from pathspec import GitIgnoreSpec

            compiled = [self._valid_pattern(index) for index in key]
            spec = GitIgnoreSpec([pattern for pattern in compiled if pattern is not None])
            self._specs[key] = spec
        include: bool | None = spec.check_file(path).include
        return include

    def _component_hits(self, name: str, prefix: str) -> list[int]:
        """Indexed patterns keyed by one path component ``name`` ending the path ``prefix``."""
        hits: list[int] = []
        found = self._by_name.get(name)
        if found is not None:
            hits.extend(found)
        if self._by_suffix:
            dot = name.rfind(".")
            found = self._by_suffix.get(name[dot:]) if dot >= 0 else None
            if found is not None:
                hits.extend(found)
        found = self._by_prefix.get(prefix)
        if found is not None:
            hits.extend(found)
        if self._by_head:
            found = self._by_head.get(name[:2])
            if found is not None:
                hits.extend(found)
        return hits

    def _parent_hits(self, parent: str) -> tuple[int, ...]:
        """Indexed patterns keyed by the components of a directory (cached: entries share it)."""
        cached = self._parents.get(parent)
        if cached is None:
            grand, _, name = parent.rpartition("/")
            inherited = self._parent_hits(grand) if grand else ()
            cached = (*inherited, *self._component_hits(name, parent))
            if len(self._parents) >= _PARENT_CACHE_SIZE:
                self._parents.clear()
            self._parents[parent] = cached
        return cached

    def _pattern(self, index: int) -> GitIgnoreSpecPattern:
        """The compiled pattern of line ``index``; raises ``ValueError`` for an invalid one."""
        pattern = self._compiled.get(index)
        if pattern is None:
            from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

            pattern = GitIgnoreSpecPattern(self._lines[index])
            self._compiled[index] = pattern
        return pattern

    def _valid_pattern(self, index: int) -> GitIgnoreSpecPattern | None:
        try:
            return self._pattern(index)
        except ValueError:  # an invalid lazily compiled pattern never matches (as in git)
            return None

    def _index_literal(self, index: int, line: str) -> bool:
        """File a pattern without wildcards under the key every path it matches must contain.

        Only the patterns of a matching key are compiled and run, lazily; the others cost nothing.
        """
        body = line[1:] if line.startswith("!") else line
        match = _LITERAL.fullmatch(body)
        if match is None:
            return False
        anchored, name = bool(match["lead"]), match["name"]
        if "." in name and _DOT_SEGMENT.search(name) is not None:
            return False
        if name.startswith("*"):
            if anchored:
                return False
            self._by_suffix.setdefault(name[1:], []).append(index)
        elif anchored or "/" in name:
            self._by_prefix.setdefault(name, []).append(index)
        else:
            self._by_name.setdefault(name, []).append(index)
        return True

    def _index_headed(self, index: int, line: str) -> bool:
        """File a wildcard pattern for one component that starts with two literal characters
        (``tmp_*``) under them: only a component starting with them can match."""
        headed = _HEADED.fullmatch(line[1:] if line.startswith("!") else line)
        if headed is None:
            return False
        self._by_head.setdefault(headed["head"], []).append(index)
        return True


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
    """A test that matches exactly when at least one of ``regexes`` matches.

    Floating patterns share one ``(?:.+/)?`` prefix, so the slash positions are tried once for
    all of them instead of once per pattern. Returns None (always run the full check) if the
    regexes do not have the expected shape. Patterns are combined in chunks of
    :data:`_PREFILTER_CHUNK`, because compiling one huge alternation is super-linear.
    """
    if not regexes:
        return None
    chunks = [
        _compile_chunk(regexes[start : start + _PREFILTER_CHUNK])
        for start in range(0, len(regexes), _PREFILTER_CHUNK)
    ]
    matchers = [chunk for chunk in chunks if chunk is not None]
    if len(matchers) != len(chunks):
        return None
    if len(matchers) == 1:
        return matchers[0]

    def match_any(path: str) -> object:
        for matcher in matchers:
            found = matcher(path)
            if found is not None:
                return found
        return None

    return match_any


def _compile_chunk(regexes: Sequence[re.Pattern[str]]) -> Callable[[str], object] | None:
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
