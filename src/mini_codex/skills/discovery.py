"""Finding skills on disk: Codex's roots and order, bounded and hostile-file safe (I/O).

Roots, in scan order (also the dedupe priority; spec/codex-surfaces.md §2.1):

1. repo: ``<dir>/.codex/skills`` for every directory from the cwd up to the project root
   (closest first, as Codex's project config layers);
2. user: ``$MINI_CODEX_HOME/skills``, then ``~/.agents/skills``;
3. admin: ``/etc/mini-codex/skills`` (configurable; Codex's ``/etc/codex/skills``);
4. user: the skill folders of enabled plugins (their skills are named ``plugin:skill``);
5. repo: ``<dir>/.agents/skills`` for every directory from the project root down to the cwd.

The project root is the nearest ancestor of the cwd holding one of ``project_root_markers``
(``.git`` by default), else the cwd. Under each root, ``**/SKILL.md`` is found breadth-first: at
most 6 levels deep, at most 2,000 folders per root, dot-entries skipped, symlinked folders
followed (each canonical folder once, so loops end). A ``SKILL.md`` must be a regular file (a
FIFO, device or symlink is refused without being opened for long: ``read_workspace_file``), at
most 1 MiB, UTF-8, with valid frontmatter; each refusal is one :class:`SkillError`. A root reads
at most 16 MiB of skill files. Skills are deduplicated by canonical path (the first root wins)
and sorted by scope rank, name, path. Parsed files are cached by (inode, size, mtime, ctime), so
a rescan of unchanged skills only lists folders and stats files.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from mini_codex.discovery.safe_read import UnsafeFileError, file_kind, read_workspace_file
from mini_codex.skills.frontmatter import (
    SkillParseError,
    allows_implicit_invocation,
    parse_skill_text,
)
from mini_codex.skills.model import (
    SkillError,
    SkillLoadOutcome,
    SkillRoot,
    SkillSpec,
    scope_rank,
)

__all__ = [
    "DEFAULT_ADMIN_ROOT",
    "MAX_SCAN_DEPTH",
    "MAX_SKILLS_DIRS_PER_ROOT",
    "MAX_SKILL_FILE_BYTES",
    "MAX_SKILL_ROOT_BYTES",
    "SkillDiscovery",
    "SkillRootsConfig",
    "find_project_root",
    "skill_roots",
]

SKILL_FILENAME = "SKILL.md"
MAX_SCAN_DEPTH = 6
MAX_SKILLS_DIRS_PER_ROOT = 2000
MAX_SKILL_FILE_BYTES = 1 << 20
MAX_SKILL_ROOT_BYTES = 16 << 20
MAX_METADATA_BYTES = 64 << 10
DEFAULT_ADMIN_ROOT = "/etc/mini-codex/skills"


class SkillRootsConfig(msgspec.Struct, frozen=True):
    """Where skills may live besides the workspace (``cli/`` and the SDK fill it in)."""

    home: Path
    """``$MINI_CODEX_HOME``: its ``skills/`` folder is a user root."""
    user_home: Path | None = None
    """The user's home directory: ``~/.agents/skills`` is a user root."""
    admin_root: Path | None = Path(DEFAULT_ADMIN_ROOT)
    project_root_markers: tuple[str, ...] = (".git",)
    plugin_roots: tuple[SkillRoot, ...] = ()
    extra_user_roots: tuple[Path, ...] = ()


def find_project_root(cwd: Path, markers: Sequence[str]) -> Path:
    if not markers:
        return cwd
    for ancestor in (cwd, *cwd.parents):
        for marker in markers:
            if os.path.lexists(ancestor / marker):
                return ancestor
    return cwd


def _dirs_root_to_cwd(cwd: Path, root: Path) -> list[Path]:
    dirs: list[Path] = []
    for directory in (cwd, *cwd.parents):
        dirs.append(directory)
        if directory == root:
            break
    dirs.reverse()
    return dirs


def skill_roots(config: SkillRootsConfig, cwd: Path) -> list[SkillRoot]:
    """The roots to scan for ``cwd``, in scan order, deduplicated by path."""
    project = find_project_root(cwd, config.project_root_markers)
    between = _dirs_root_to_cwd(cwd, project)
    roots = [SkillRoot(str(d / ".codex" / "skills"), "repo") for d in reversed(between)]
    roots.append(SkillRoot(str(config.home / "skills"), "user"))
    if config.user_home is not None:
        roots.append(SkillRoot(str(config.user_home / ".agents" / "skills"), "user"))
    if config.admin_root is not None:
        roots.append(SkillRoot(str(config.admin_root), "admin"))
    roots.extend(config.plugin_roots)
    roots.extend(SkillRoot(str(path), "user") for path in config.extra_user_roots)
    roots.extend(SkillRoot(str(d / ".agents" / "skills"), "repo") for d in between)
    seen: set[str] = set()
    unique: list[SkillRoot] = []
    for root in roots:
        if root.path not in seen:
            seen.add(root.path)
            unique.append(root)
    return unique


_StatKey = tuple[int, int, int, int]


def _stat_key(st: os.stat_result) -> _StatKey:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class _Parsed(msgspec.Struct):
    key: _StatKey
    name: str = ""
    description: str = ""
    error: str | None = None
    size: int = 0


class SkillDiscovery(msgspec.Struct):
    """Discovers skills under roots; keeps a stat-validated cache of parsed files."""

    _cache: dict[str, _Parsed] = msgspec.field(default_factory=dict)
    _metadata_cache: dict[str, tuple[_StatKey, bool]] = msgspec.field(default_factory=dict)
    _dirs: dict[str, tuple[tuple[int, int, int], list[tuple[str, bool, bool]]]] = msgspec.field(
        default_factory=dict
    )

    def load(self, roots: Iterable[SkillRoot]) -> SkillLoadOutcome:
        skills: list[SkillSpec] = []
        errors: list[SkillError] = []
        notes: list[str] = []
        used_roots: list[str] = []
        scanned: list[SkillRoot] = []
        seen_paths: set[str] = set()
        live: set[str] = set()
        for root in roots:
            canonical = _canonical(root.path)
            if canonical is None:
                continue
            scanned.append(SkillRoot(canonical, root.scope, root.plugin))
            found = self._scan_root(root, canonical, errors, notes, live)
            for skill in found:
                if skill.path in seen_paths:
                    continue
                seen_paths.add(skill.path)
                skills.append(skill)
                if canonical not in used_roots:
                    used_roots.append(canonical)
        for stale in set(self._cache) - live:
            del self._cache[stale]
        if len(self._dirs) > 4 * MAX_SKILLS_DIRS_PER_ROOT:  # folders that went away
            self._dirs.clear()
        skills.sort(key=lambda s: (scope_rank(s.scope), s.name, s.path))
        return SkillLoadOutcome(
            skills=tuple(skills),
            roots=tuple(used_roots),
            errors=tuple(errors),
            notes=tuple(notes),
            scanned_roots=tuple(scanned),
        )

    def _scan_root(
        self,
        root: SkillRoot,
        canonical: str,
        errors: list[SkillError],
        notes: list[str],
        live: set[str],
    ) -> list[SkillSpec]:
        found: list[SkillSpec] = []
        visited = {canonical}
        queue: deque[tuple[str, int]] = deque([(canonical, 0)])
        truncated = False
        budget = MAX_SKILL_ROOT_BYTES
        while queue:
            directory, depth = queue.popleft()
            try:
                entries = self._list(directory)
            except OSError as exc:
                notes.append(f"cannot list skills folder {directory}: {exc.strerror or exc}")
                continue
            for name, is_dir, is_link in entries:
                if is_dir:
                    if depth + 1 > MAX_SCAN_DEPTH:
                        continue
                    # Inside a canonical folder only a symlink needs resolving.
                    path = os.path.join(directory, name)
                    target = _canonical(path) if is_link else path
                    if target is None or target in visited:
                        continue
                    if len(visited) >= MAX_SKILLS_DIRS_PER_ROOT:
                        truncated = True
                        continue
                    visited.add(target)
                    queue.append((target, depth + 1))
                    continue
                if name != SKILL_FILENAME:
                    continue
                path = os.path.join(directory, name)
                live.add(path)
                parsed = self._parse(path, budget)
                if parsed is None:
                    continue
                budget -= parsed.size
                if parsed.error is not None:
                    errors.append(SkillError(path, parsed.error))
                    continue
                base = parsed.name
                found.append(
                    SkillSpec(
                        name=f"{root.plugin}:{base}" if root.plugin else base,
                        description=parsed.description,
                        path=path,
                        scope=root.scope,
                        root=canonical,
                        plugin=root.plugin,
                        allow_implicit=not any(e[0] == "agents" for e in entries)
                        or self._allows_implicit(directory),
                    )
                )
        if truncated:
            notes.append(
                f"skills scan truncated after {MAX_SKILLS_DIRS_PER_ROOT} folders (root {canonical})"
            )
        return found

    def _list(self, directory: str) -> list[tuple[str, bool, bool]]:
        """(name, is a folder (symlinks followed), is a symlink) of the non-dot entries, sorted;
        cached while the folder's inode and mtime/ctime are unchanged."""
        st = os.stat(directory)
        key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        cached = self._dirs.get(directory)
        if cached is not None and cached[0] == key:
            return cached[1]
        entries: list[tuple[str, bool, bool]] = []
        with os.scandir(directory) as listing:
            for entry in listing:
                if entry.name.startswith("."):
                    continue
                try:
                    entries.append((entry.name, entry.is_dir(), entry.is_symlink()))
                except OSError:
                    continue
        entries.sort()
        self._dirs[directory] = (key, entries)
        return entries

    def _parse(self, path: str, budget: int) -> _Parsed | None:
        try:
            st = os.lstat(path)
        except OSError:
            return None
        key = _stat_key(st)
        cached = self._cache.get(path)
        if cached is not None and cached.key == key:
            return cached
        parsed = _Parsed(key)
        if not stat.S_ISREG(st.st_mode):
            kind = "a symlink" if stat.S_ISLNK(st.st_mode) else file_kind(st.st_mode)
            parsed.error = f"not a regular file ({kind})"
        elif st.st_size > budget:
            parsed.error = "skipped: the skills of this root exceed 16 MiB"
            return parsed  # not cached: depends on the other files of the root
        else:
            parsed = _read_and_parse(path, key)
        self._cache[path] = parsed
        return parsed

    def _allows_implicit(self, directory: str) -> bool:
        path = os.path.join(directory, "agents", "openai.yaml")
        try:
            st = os.lstat(path)
        except OSError:
            return True
        key = _stat_key(st)
        cached = self._metadata_cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        allowed = True
        if stat.S_ISREG(st.st_mode):
            try:
                content = read_workspace_file(path, MAX_METADATA_BYTES, boundary=None)
                allowed = allows_implicit_invocation(content.data.decode("utf-8", "replace"))
            except OSError:
                allowed = True
        self._metadata_cache[path] = (key, allowed)
        return allowed


def _read_and_parse(path: str, key: _StatKey) -> _Parsed:
    parsed = _Parsed(key)
    try:
        content = read_workspace_file(path, MAX_SKILL_FILE_BYTES, boundary=None)
    except UnsafeFileError as exc:
        parsed.error = exc.message
        return parsed
    except OSError as exc:
        parsed.error = f"failed to read file: {exc.strerror or exc}"
        return parsed
    parsed.size = len(content.data)
    if content.truncated:
        parsed.error = f"larger than {MAX_SKILL_FILE_BYTES} bytes"
        return parsed
    try:
        text = content.data.decode("utf-8")
    except UnicodeDecodeError:
        parsed.error = "failed to read file: not valid UTF-8"
        return parsed
    try:
        front = parse_skill_text(text, os.path.basename(os.path.dirname(path)))
    except SkillParseError as exc:
        parsed.error = str(exc)
        return parsed
    parsed.name, parsed.description = front.name, front.description
    return parsed


def _canonical(path: str) -> str | None:
    """The canonical path of an existing directory, else None."""
    try:
        resolved = os.path.realpath(path)
        return resolved if os.path.isdir(resolved) else None
    except OSError:
        return None
