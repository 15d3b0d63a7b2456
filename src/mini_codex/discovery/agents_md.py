"""AGENTS.md discovery, loading and caching (I/O; spec/codex-runtime.md §7).

What belongs here: finding the project root from the cwd (the nearest ancestor holding one of
the root markers, default ``.git``), picking at most one instructions file per directory from the
root down to the cwd (``AGENTS.override.md``, then ``AGENTS.md``, then configured fallback names),
reading them with one shared byte budget (default 32 KiB), joining them, and
:class:`AgentsMdCache`, which returns the same :class:`LoadedAgentsMd` object until a file that
was found or probed changes. What does not: rendering (the ``agents_md`` section takes
``LoadedAgentsMd.directory`` and ``.text``) and reading configuration (callers pass
:class:`AgentsMdConfig`).

Rules (Codex's): no marker found, or an empty marker list, means only the cwd is searched; the
walk never goes above the root. Regular files and symlinks to them qualify; other kinds (FIFOs,
devices, symlink loops) are skipped with a warning, and a symlink is followed only while it stays
inside the project root. Files are read without blocking and never beyond the budget
(``safe_read.py``), so a model that turns AGENTS.md into a FIFO or a 20 GB file cannot stall a step.
A file larger than the remaining budget is truncated with a warning (an incomplete UTF-8 sequence
at the cut is dropped rather than turned into U+FFFD); invalid UTF-8 is decoded lossily with a
warning; whitespace-only content contributes nothing and consumes no budget. Files are joined
with a blank line; host-provided user instructions come first, separated from the project docs
by ``"\\n\\n--- project-doc ---\\n\\n"``. Problems become warnings, never exceptions.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import msgspec

from mini_codex.discovery.safe_read import UnsafeFileError, display_path, read_workspace_file
from mini_codex.discovery.workspace import DEFAULT_RACY_MARGIN_NS
from mini_codex.world_state.sections.agents_md import PROJECT_DOC_SEPARATOR, EnvironmentDocs

__all__ = [
    "DEFAULT_FILENAME",
    "DEFAULT_PROJECT_DOC_MAX_BYTES",
    "DEFAULT_ROOT_MARKERS",
    "LOCAL_OVERRIDE_FILENAME",
    "PROJECT_DOC_SEPARATOR",
    "AgentsMdCache",
    "AgentsMdConfig",
    "LoadedAgentsMd",
    "discover_agents_md_paths",
    "load_agents_md",
]

DEFAULT_PROJECT_DOC_MAX_BYTES: Final = 32 * 1024
LOCAL_OVERRIDE_FILENAME: Final = "AGENTS.override.md"
DEFAULT_FILENAME: Final = "AGENTS.md"
DEFAULT_ROOT_MARKERS: Final = (".git",)


class AgentsMdConfig(msgspec.Struct, frozen=True):
    """The settings that select what is loaded (part of the cache key)."""

    max_bytes: int = DEFAULT_PROJECT_DOC_MAX_BYTES
    """Shared budget for all project docs; 0 disables them."""
    fallback_filenames: tuple[str, ...] = ()
    """Names tried after ``AGENTS.override.md`` and ``AGENTS.md`` in each directory."""
    root_markers: tuple[str, ...] = DEFAULT_ROOT_MARKERS
    """Names whose presence marks the project root; empty: search only the cwd."""

    def __post_init__(self) -> None:
        if self.max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {self.max_bytes}")

    def candidate_filenames(self) -> tuple[str, ...]:
        names = [LOCAL_OVERRIDE_FILENAME, DEFAULT_FILENAME]
        for name in self.fallback_filenames:
            if name and name not in names:
                names.append(name)
        return tuple(names)


_DEFAULT_CONFIG = AgentsMdConfig()


class LoadedAgentsMd(msgspec.Struct, frozen=True):
    """The instructions for one cwd: ``(directory, text)`` feed the ``agents_md`` section."""

    directory: str | None
    """The cwd the instructions are for; None when there are none."""
    text: str | None
    """User instructions and project docs joined; None when there are none."""
    sources: tuple[str, ...] = ()
    """The files that contributed text, root first."""
    warnings: tuple[str, ...] = ()
    environments: tuple[EnvironmentDocs, ...] | None = None
    """With remote environments (issue 26): each ready one's docs, which ``text`` labels."""


# --- probes: every file-system fact a load depended on ---------------------------------------

_Fact = tuple[int, int, int, int, int] | bool | None


def _file_fact(path: str) -> _Fact:
    """``(mode, mtime_ns, ctime_ns, size, ino)`` of the path (of the target for a symlink)."""
    try:
        st = os.stat(path)
    except OSError:
        try:
            st = os.lstat(path)
        except OSError:
            return None
    return (st.st_mode, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


class _Probes(msgspec.Struct):
    facts: list[tuple[bool, str, _Fact]] = msgspec.field(default_factory=list)
    """``(is_existence_probe, path, fact)`` in probing order."""

    def exists(self, path: str) -> bool:
        found = os.path.exists(path)
        self.facts.append((True, path, found))
        return found

    def file(self, path: str) -> _Fact:
        fact = _file_fact(path)
        self.facts.append((False, path, fact))
        return fact

    def still_valid(self) -> bool:
        for existence, path, fact in self.facts:
            current = os.path.exists(path) if existence else _file_fact(path)
            if current != fact:
                return False
        return True

    def newest_change_ns(self) -> int:
        newest = 0
        for existence, _, fact in self.facts:
            if not existence and isinstance(fact, tuple):
                newest = max(newest, min(fact[1], fact[2]))
        return newest


# --- discovery --------------------------------------------------------------------------------


def _valid_markers(markers: Sequence[str], warnings: list[str]) -> tuple[str, ...]:
    for marker in markers:
        if not marker or "/" in marker or "\0" in marker or marker in (".", ".."):
            warnings.append(
                f"invalid project root marker {marker!r}; using the default {DEFAULT_ROOT_MARKERS}"
            )
            return DEFAULT_ROOT_MARKERS
    return tuple(markers)


def _search_dirs(
    cwd: str, config: AgentsMdConfig, probes: _Probes, warnings: list[str]
) -> list[str]:
    """Directories from the project root down to ``cwd`` (just ``cwd`` without a root)."""
    markers = _valid_markers(config.root_markers, warnings)
    if not markers:
        return [cwd]
    chain: list[str] = []
    cursor = cwd
    while True:
        chain.append(cursor)
        if any(probes.exists(os.path.join(cursor, marker)) for marker in markers):
            return list(reversed(chain))
        parent = os.path.dirname(cursor)
        if parent == cursor:
            return [cwd]
        cursor = parent


def _discover(
    cwd: str, config: AgentsMdConfig, probes: _Probes, warnings: list[str]
) -> tuple[list[str], str]:
    """The files to read, root first, and the project root (symlinks may not leave it)."""
    if config.max_bytes == 0:
        return [], cwd
    found: list[str] = []
    names = config.candidate_filenames()
    directories = _search_dirs(cwd, config, probes, warnings)
    for directory in directories:
        for name in names:
            candidate = os.path.join(directory, name)
            fact = probes.file(candidate)
            if not isinstance(fact, tuple):
                continue
            mode = fact[0]
            if stat_module.S_ISREG(mode):
                found.append(candidate)
                break
            problem = _not_a_file(candidate, mode)
            if problem is not None:
                warnings.append(f"AGENTS.md file {display_path(candidate)} {problem}; skipped")
    return found, directories[0]


def _not_a_file(path: str, mode: int) -> str | None:
    """Why a candidate that is not a regular file is skipped (None: silently, as Codex does)."""
    if stat_module.S_ISDIR(mode):
        return None
    if stat_module.S_ISLNK(mode):  # os.stat failed: dangling (silent) or a loop
        try:
            os.stat(path)
        except OSError as exc:
            return "is a symlink loop" if exc.errno == errno.ELOOP else None
        return None
    if stat_module.S_ISFIFO(mode):
        return "is a FIFO"
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode):
        return "is a device"
    return "is not a regular file"


def discover_agents_md_paths(
    cwd: Path | str, config: AgentsMdConfig = _DEFAULT_CONFIG
) -> tuple[Path, ...]:
    """The instructions files that would be read for ``cwd``, project root first."""
    real = os.path.realpath(os.fspath(cwd))
    return tuple(Path(p) for p in _discover(real, config, _Probes(), [])[0])


# --- loading ----------------------------------------------------------------------------------


def _drop_partial_utf8(data: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence at the end of ``data`` (left by a byte-budget cut)."""
    start = len(data) - 1
    while start >= 0 and len(data) - start < 4 and data[start] & 0xC0 == 0x80:
        start -= 1
    if start < 0:
        return data
    lead = data[start]
    needed = 1
    if lead >> 5 == 0b110:
        needed = 2
    elif lead >> 4 == 0b1110:
        needed = 3
    elif lead >> 3 == 0b11110:
        needed = 4
    return data[:start] if len(data) - start < needed else data


class _Load(msgspec.Struct):
    value: LoadedAgentsMd
    probes: _Probes
    complete: bool


def _load(cwd: str, config: AgentsMdConfig, user_instructions: str | None) -> _Load:
    warnings: list[str] = []
    probes = _Probes()
    real = os.path.realpath(cwd)
    complete = True
    parts: list[str] = []
    sources: list[str] = []
    remaining = config.max_bytes
    found, boundary = _discover(real, config, probes, warnings)
    for path in found:
        if remaining <= 0:
            break
        shown = display_path(path)
        try:
            content = read_workspace_file(path, remaining, boundary=boundary)
        except FileNotFoundError:
            continue  # a dangling symlink, or removed since it was found
        except UnsafeFileError as exc:
            warnings.append(f"AGENTS.md: {exc}")
            complete = complete and not exc.transient
            continue
        except OSError as exc:
            warnings.append(f"cannot read AGENTS.md file {shown}: {exc.strerror}")
            complete = False
            continue
        data = content.data
        if content.truncated:
            warnings.append(
                f"AGENTS.md file {shown} exceeds the remaining budget ({remaining} bytes); "
                "truncating."
            )
            used = len(data)
            data = _drop_partial_utf8(data)
        else:
            used = len(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", errors="replace")
            warnings.append(f"AGENTS.md file {shown} is not valid UTF-8; invalid bytes replaced.")
        if not text.strip():
            continue
        parts.append(text)
        sources.append(path)
        remaining -= used
    docs = "\n\n".join(parts) if parts else None
    if user_instructions and docs:
        text_out: str | None = user_instructions + PROJECT_DOC_SEPARATOR + docs
    else:
        text_out = user_instructions or docs
    value = LoadedAgentsMd(
        directory=cwd if text_out is not None else None,
        text=text_out,
        sources=tuple(sources),
        warnings=tuple(warnings),
    )
    return _Load(value, probes, complete)


def load_agents_md(
    cwd: Path | str,
    config: AgentsMdConfig = _DEFAULT_CONFIG,
    *,
    user_instructions: str | None = None,
) -> LoadedAgentsMd:
    """Discover and read the AGENTS.md files for ``cwd`` (no caching)."""
    return _load(os.path.abspath(os.fspath(cwd)), config, user_instructions).value


# --- cache ------------------------------------------------------------------------------------

_Key = tuple[str, AgentsMdConfig, str | None]


class _Entry(msgspec.Struct):
    load: _Load
    racy: bool


class AgentsMdCache:
    """Loads per (cwd, config, user instructions), revalidated by stat on every lookup.

    A lookup re-stats every path the load probed (markers, candidate names, files read): if all
    are unchanged the cached object is returned as is. Otherwise the files are loaded again; a
    result equal to the cached one keeps the cached object (so world-state diffs stay O(1)); an
    incomplete load (a read error) keeps the cached value and is retried next time. Files
    modified within ``racy_margin_ns`` of a load are re-read on the next lookup regardless.
    Lookups are serialized by a lock, so an older refresh never overwrites a newer one.
    """

    def __init__(
        self,
        *,
        max_entries: int = 16,
        racy_margin_ns: int = DEFAULT_RACY_MARGIN_NS,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be >= 1")
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._max_entries = max_entries
        self._margin = racy_margin_ns
        self._clock = clock
        self._lock = threading.Lock()
        self.loads = 0
        """How many times files were actually (re)loaded (for tests and diagnostics)."""

    def get(
        self,
        cwd: Path | str,
        config: AgentsMdConfig = _DEFAULT_CONFIG,
        *,
        user_instructions: str | None = None,
    ) -> LoadedAgentsMd:
        key: _Key = (os.path.abspath(os.fspath(cwd)), config, user_instructions)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and not entry.racy and entry.load.probes.still_valid():
                self._entries.move_to_end(key)
                return entry.load.value
            threshold = self._clock() - self._margin
            fresh = _load(key[0], config, user_instructions)
            self.loads += 1
            racy = fresh.probes.newest_change_ns() >= threshold
            if entry is not None:
                if not fresh.complete:
                    entry.racy = True  # retry next time, keep the value
                    return entry.load.value
                if fresh.value == entry.load.value:
                    fresh.value = entry.load.value
            self._entries[key] = _Entry(fresh, racy or not fresh.complete)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
            return fresh.value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
