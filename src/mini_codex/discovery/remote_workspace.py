"""The workspace file set of a remote environment, listed through ``fs/readDirectory`` (issue 26).

When a step's primary environment is remote, the ``workspace`` section lists the files under
*its* cwd. The listing walks the tree breadth first, the directories of one level read
concurrently; ``.git`` and the entries of the root ``.gitignore``'s plain names are not entered
(no full git ignore rules: the executor has no scanner), symlinks are not followed (an entry that
is neither a file nor a directory is listed as a file), and the walk stops at ``max_files`` files
or ``max_dirs`` directories with a warning. An unreadable directory is skipped with a warning.
"""

from __future__ import annotations

import posixpath

import msgspec

from mini_codex.discovery.remote_agents_md import gather
from mini_codex.environments.client import ExecServerClient, ExecutorRequestError
from mini_codex.protocol.exec_server_codec import file_uri
from mini_codex.world_state.workspace_files import WorkspaceFiles

__all__ = ["RemoteListing", "list_remote_workspace"]

DEFAULT_MAX_FILES = 20_000
DEFAULT_MAX_DIRS = 2_000
_ALWAYS_SKIPPED = frozenset({".git"})


class RemoteListing(msgspec.Struct, frozen=True):
    files: WorkspaceFiles
    warnings: tuple[str, ...] = ()


async def _ignored_names(client: ExecServerClient, root: str) -> frozenset[str]:
    """Plain names (no glob, no slash inside) from the root ``.gitignore``."""
    try:
        data = await client.read_file(posixpath.join(root, ".gitignore"))
    except ExecutorRequestError:
        return _ALWAYS_SKIPPED
    names = set(_ALWAYS_SKIPPED)
    for line in data.decode("utf-8", "replace").splitlines():
        name = line.strip().strip("/")
        if name and not name.startswith(("#", "!")) and not set(name) & set("*?[/\\"):
            names.add(name)
    return frozenset(names)


async def list_remote_workspace(
    client: ExecServerClient,
    root: str,
    *,
    max_files: int = DEFAULT_MAX_FILES,
    max_dirs: int = DEFAULT_MAX_DIRS,
) -> RemoteListing:
    skipped = await _ignored_names(client, root)
    warnings: list[str] = []
    files: list[str] = []
    level = [""]
    seen_dirs = 0

    async def read(relative: str) -> list[dict[str, object]] | str:
        path = posixpath.join(root, relative) if relative else root
        try:
            result = await client.request("fs/readDirectory", {"path": file_uri(path)})
        except ExecutorRequestError as exc:
            return f"cannot list {path}: {exc.message}"
        entries = result.get("entries")
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []

    while level and len(files) < max_files:
        seen_dirs += len(level)
        listed = await gather(read, level)
        below: list[str] = []
        for relative, entries in zip(level, listed, strict=True):
            if isinstance(entries, str):
                warnings.append(entries)
                continue
            for entry in entries:
                name = entry.get("fileName")
                if not isinstance(name, str) or not name or "/" in name:
                    continue
                child = f"{relative}/{name}" if relative else name
                if entry.get("isDirectory"):
                    if name not in skipped:
                        below.append(child)
                elif name not in skipped:
                    files.append(child)
        if seen_dirs + len(below) > max_dirs:
            warnings.append(
                f"the workspace of {root} has more than {max_dirs} directories; "
                "the listing stops there"
            )
            below = below[: max(max_dirs - seen_dirs, 0)]
        level = sorted(below)
    if len(files) > max_files:
        warnings.append(f"the workspace of {root} has more than {max_files} files; listing cut")
        files = sorted(files)[:max_files]
    return RemoteListing(WorkspaceFiles(root, files), tuple(warnings))
