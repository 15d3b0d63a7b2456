"""``apply_patch`` routed to an environment (issue 26): the header, and applying through ``fs/*``.

With two or more environments the freeform grammar gains Codex's optional header after
``*** Begin Patch``: ``*** Environment ID: <id>`` (the function form gains ``environment_id``).
``RoutedPatch`` strips the header, resolves the environment like the command tools
(``environment_routing.resolve_environment``), and for a remote one plans the whole patch first
(reading every file it updates with ``fs/readFile``, hunks applied in memory by the same pure
``apply_chunks``), then writes it with ``fs/createDirectory`` / ``fs/writeFile`` / ``fs/remove``.
Paths are relative to that environment's cwd; absolute paths and ``..`` are refused unless the
turn is ``danger-full-access``. Before the first change every touched path is backed up (its bytes,
or that it did not exist, and the directories the writes create); a write failing half-way puts
them all back, so nothing is left half-applied, and the model is told so (or, if the executor went
away meanwhile, which files to check).
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from msgspec.structs import replace

from mini_codex.environments.client import ExecServerClient, ExecutorGone, ExecutorRequestError
from mini_codex.protocol.exec_server_codec import file_uri
from mini_codex.tools.apply_patch.apply import ApplyResult, FileChange
from mini_codex.tools.apply_patch.content import HunkMismatchError, apply_chunks
from mini_codex.tools.apply_patch.parser import (
    AddFile,
    DeleteFile,
    Patch,
    PatchParseError,
    UpdateFile,
    parse_patch,
)
from mini_codex.tools.base import Tool, ToolContext, ToolOutput, ToolSpec
from mini_codex.tools.environment_routing import resolve_environment, with_environment_id

__all__ = ["RoutedPatch", "split_environment_header"]

HEADER = "*** Environment ID: "
_GRAMMAR_START = "start: begin_patch hunk+ end_patch"
_IO_ERROR = -32004
"""The executor's code for an OS error (a missing path among them)."""


def split_environment_header(text: str) -> tuple[str | None, str]:
    """``(environment id or None, the patch without the header line)``."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[0].strip() == "*** Begin Patch" and lines[1].startswith(HEADER):
        return lines[1][len(HEADER) :].strip(), "\n".join([lines[0], *lines[2:]])
    return None, text


def _advertised(spec: ToolSpec) -> ToolSpec:
    if spec.kind == "custom" and spec.format is not None:
        definition = str(spec.format.get("definition", ""))
        definition = definition.replace(
            _GRAMMAR_START,
            "start: begin_patch environment_id? hunk+ end_patch\n"
            'environment_id: "*** Environment ID: " filename LF',
        )
        return replace(spec, format={**spec.format, "definition": definition})
    return with_environment_id(spec)


class RoutedPatch:
    def __init__(self, tool: Tool, *, advertise: bool) -> None:
        self.tool = tool
        self._spec = _advertised(tool.spec) if advertise else tool.spec

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        freeform = self.tool.spec.kind == "custom"
        if freeform:
            env_id, text = split_environment_header(payload)
            inner_payload = text
        else:
            try:
                args = json.loads(payload or "{}")
            except ValueError:
                return await self.tool.call(payload, ctx)
            if not isinstance(args, dict):
                return await self.tool.call(payload, ctx)
            env_id = args.pop("environment_id", None)
            text = str(args.get("input", ""))
            inner_payload = json.dumps(args)
        target = resolve_environment(ctx, "apply_patch", env_id)
        if isinstance(target, ToolOutput):
            return target
        if target.is_local:
            return await self.tool.call(inner_payload, ctx)
        try:
            patch = parse_patch(text)
        except PatchParseError as exc:
            return ToolOutput.failure(f"apply_patch failed: {exc}\nNo files were changed.")
        assert target.client is not None
        full = ctx.sandbox.mode == "danger-full-access"
        if ctx.sandbox.mode == "read-only":
            return ToolOutput.failure("apply_patch failed: the sandbox is read-only")
        try:
            result = await _apply_remote(patch, target.client, target.cwd, full_access=full)
        except (PatchParseError, HunkMismatchError, ValueError) as exc:
            return ToolOutput.failure(f"apply_patch failed: {exc}\nNo files were changed.")
        except RolledBack as exc:
            return ToolOutput.failure(
                f"apply_patch failed on `{target.id}`: {exc}\n"
                "The changes already written were undone: no files were changed."
            )
        except RollbackFailed as exc:
            return ToolOutput.failure(f"apply_patch failed on `{target.id}`: {exc}")
        except ExecutorRequestError as exc:
            return ToolOutput.failure(
                f"apply_patch failed on `{target.id}`: {exc.message}\nNo files were changed."
            )
        except ExecutorGone as exc:
            return ToolOutput.failure(
                f"apply_patch: the executor of environment `{target.id}` went away ({exc})"
            )
        return ToolOutput(text=result.summary(), success=True)


def _path(cwd: str, path: str, *, full_access: bool) -> str:
    if not full_access and (posixpath.isabs(path) or ".." in path.split("/")):
        raise ValueError(f"path {path!r} must be relative and stay inside {cwd}")
    return posixpath.normpath(posixpath.join(cwd, path))


class RolledBack(Exception):
    """A write failed half-way; what was already written has been put back."""


class RollbackFailed(Exception):
    """A write failed half-way and putting the files back failed too."""


async def _exists(client: ExecServerClient, path: str) -> dict[str, Any] | None:
    try:
        return await client.request("fs/getMetadata", {"path": file_uri(path), "sandbox": None})
    except ExecutorRequestError as exc:
        if exc.code == _IO_ERROR:
            return None
        raise


async def _backup(client: ExecServerClient, path: str, known: dict[str, bytes]) -> bytes | None:
    """The file's current bytes (None: it does not exist); a directory cannot be patched."""
    if path in known:
        return known[path]
    meta = await _exists(client, path)
    if meta is None:
        return None
    if not meta.get("isFile"):
        raise ValueError(f"{path} is not a regular file")
    return await client.read_file(path)


async def _missing_top(client: ExecServerClient, directory: str, cwd: str) -> str | None:
    """The outermost directory of ``directory`` that does not exist yet (None: it exists)."""
    top = None
    while directory not in ("", "/") and await _exists(client, directory) is None:
        top = directory
        if directory == cwd:
            break
        directory = posixpath.dirname(directory)
    return top


async def _apply_remote(
    patch: Patch, client: ExecServerClient, cwd: str, *, full_access: bool
) -> ApplyResult:
    writes: list[tuple[str, bytes]] = []
    removes: list[str] = []
    changes: list[FileChange] = []
    originals: dict[str, bytes] = {}
    for hunk in patch.hunks:  # plan: every read and every new content first
        match hunk:
            case AddFile(path=path, contents=contents):
                writes.append((_path(cwd, path, full_access=full_access), contents.encode()))
                changes.append(FileChange("A", path))
            case DeleteFile(path=path):
                removes.append(_path(cwd, path, full_access=full_access))
                changes.append(FileChange("D", path))
            case UpdateFile(path=path, move_to=move_to, chunks=chunks):
                source = _path(cwd, path, full_access=full_access)
                data = await client.read_file(source)
                originals[source] = data
                updated = apply_chunks(data.decode("utf-8"), chunks, path=path)
                destination = source
                if move_to is not None:
                    destination = _path(cwd, move_to, full_access=full_access)
                    removes.append(source)
                writes.append((destination, updated.encode()))
                changes.append(FileChange("M", move_to or path))
    # what every touched path holds now, and the directories the writes will create
    backups: dict[str, bytes | None] = {}
    for path in [*removes, *(path for path, _ in writes)]:
        if path not in backups:
            backups[path] = await _backup(client, path, originals)
    created: list[str] = []
    for directory in dict.fromkeys(posixpath.dirname(path) for path, _ in writes):
        top = await _missing_top(client, directory, cwd)
        if top is not None and not any(top.startswith(d + "/") or top == d for d in created):
            created.append(top)
    doing = ""
    try:
        for path in removes:
            doing = f"removing {path}"
            await client.request(
                "fs/remove", {"path": file_uri(path), "recursive": False, "force": True}
            )
        for path, data in writes:
            doing = f"creating {posixpath.dirname(path)}"
            await client.request(
                "fs/createDirectory",
                {"path": file_uri(posixpath.dirname(path)), "recursive": True},
            )
            doing = f"writing {path}"
            await client.write_file(path, data)
    except ExecutorRequestError as exc:
        try:
            await _restore(client, backups, created)
        except (ExecutorRequestError, ExecutorGone) as again:
            raise RollbackFailed(
                f"{doing}: {exc.message}; putting the files back failed too ({again}): "
                f"check {', '.join(sorted(backups))}"
            ) from exc
        raise RolledBack(f"{doing}: {exc.message}") from exc
    return ApplyResult(tuple(changes))


async def _restore(
    client: ExecServerClient, backups: dict[str, bytes | None], created: list[str]
) -> None:
    for path, data in backups.items():
        if data is None:
            await client.request(
                "fs/remove", {"path": file_uri(path), "recursive": False, "force": True}
            )
        else:
            await client.request(
                "fs/createDirectory",
                {"path": file_uri(posixpath.dirname(path)), "recursive": True},
            )
            await client.write_file(path, data)
    for directory in created:
        await client.request(
            "fs/remove", {"path": file_uri(directory), "recursive": True, "force": True}
        )
