"""AGENTS.md of a remote environment, discovered through its executor's ``fs/*`` (issue 26).

The same rules as the local loader (``discovery.agents_md``), over Codex's exec-server protocol as
Codex's own client does it (the recorded ``codex_client_session.jsonl``): ``fs/getMetadata`` of
each root marker in the cwd and every ancestor (the nearest hit is the project root; none: only
the cwd), then, in each directory from the root down to the cwd, ``fs/getMetadata`` of
``AGENTS.override.md``, ``AGENTS.md`` and the fallback names — the first regular file is read with
``fs/readFile``. One shared byte budget (``AgentsMdConfig.max_bytes``): a file over what is left
is cut (an incomplete UTF-8 sequence at the cut dropped) with a warning; a file larger than
``_MAX_READ_BYTES`` is not read at all. Whitespace-only files contribute nothing. The probes of
one phase are sent together (one round trip per phase, not per path).

Returns the project docs only (no user instructions): the ``agents_md`` section labels each
environment's docs (``world_state.sections.agents_md.compose_environment_docs``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio
import msgspec

from mini_codex.discovery.agents_md import AgentsMdConfig
from mini_codex.environments.client import ExecServerClient, ExecutorRequestError
from mini_codex.protocol.exec_server_codec import file_uri

__all__ = ["RemoteDocs", "gather", "load_remote_agents_md", "metadata_of", "remote_metadata"]

_MAX_READ_BYTES = 16 * 1024 * 1024
_T = TypeVar("_T")


class RemoteDocs(msgspec.Struct, frozen=True):
    """One environment's project docs: the joined text (None: none), the files, warnings."""

    text: str | None
    sources: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


async def remote_metadata(client: ExecServerClient, path: str) -> dict[str, Any] | None:
    """``fs/getMetadata`` of ``path``; None when it cannot be stat'ed (missing, not a dir, …)."""
    try:
        return await client.request("fs/getMetadata", {"path": file_uri(path), "sandbox": None})
    except ExecutorRequestError:
        return None


async def gather(function: Callable[[str], Awaitable[_T]], arguments: Sequence[str]) -> list[_T]:
    """``function`` of every argument, concurrently; the results in order."""
    results: list[Any] = [None] * len(arguments)

    async def one(index: int) -> None:
        results[index] = await function(arguments[index])

    async with anyio.create_task_group() as tg:
        for index in range(len(arguments)):
            tg.start_soon(one, index)
    return results


def metadata_of(client: ExecServerClient) -> Callable[[str], Awaitable[dict[str, Any] | None]]:
    async def probe(path: str) -> dict[str, Any] | None:
        return await remote_metadata(client, path)

    return probe


def _ancestors(cwd: str) -> list[str]:
    chain = [cwd]
    while (parent := posixpath.dirname(chain[-1])) != chain[-1]:
        chain.append(parent)
    return chain


async def _search_dirs(client: ExecServerClient, cwd: str, markers: Sequence[str]) -> list[str]:
    if not markers:
        return [cwd]
    chain = _ancestors(cwd)
    probes = [posixpath.join(d, m) for d in chain for m in markers]
    found = await gather(metadata_of(client), probes)
    for index in range(len(chain)):
        hits = found[index * len(markers) : (index + 1) * len(markers)]
        if any(hit is not None for hit in hits):
            return list(reversed(chain[: index + 1]))
    return [cwd]


def _drop_partial_utf8(data: bytes) -> bytes:
    for cut in range(len(data), max(len(data) - 4, 0) - 1, -1):
        try:
            data[:cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return data[:cut]
    return data


async def load_remote_agents_md(
    client: ExecServerClient, cwd: str, config: AgentsMdConfig
) -> RemoteDocs:
    if config.max_bytes == 0:
        return RemoteDocs(None)
    directories = await _search_dirs(client, cwd, config.root_markers)
    names = config.candidate_filenames()
    probes = [posixpath.join(d, n) for d in directories for n in names]
    metas = await gather(metadata_of(client), probes)
    chosen: list[tuple[str, int]] = []
    for index in range(len(directories)):
        for path, meta in zip(
            probes[index * len(names) : (index + 1) * len(names)],
            metas[index * len(names) : (index + 1) * len(names)],
            strict=True,
        ):
            if meta is not None and meta.get("isFile"):
                size = meta.get("size")
                chosen.append((path, size if isinstance(size, int) else 0))
                break
    warnings: list[str] = []
    parts: list[str] = []
    sources: list[str] = []
    remaining = config.max_bytes
    for path, size in chosen:
        if remaining <= 0:
            break
        if size > _MAX_READ_BYTES:
            warnings.append(f"AGENTS.md file {path} is {size} bytes; not read")
            continue
        try:
            data = await client.read_file(path)
        except ExecutorRequestError as exc:
            warnings.append(f"cannot read AGENTS.md file {path}: {exc.message}")
            continue
        if len(data) > remaining:
            warnings.append(
                f"AGENTS.md file {path} exceeds the remaining budget ({remaining} bytes); "
                "truncating."
            )
            data = _drop_partial_utf8(data[:remaining])
        text = data.decode("utf-8", errors="replace")
        if not text.strip():
            continue
        parts.append(text)
        sources.append(path)
        remaining -= len(data)
    return RemoteDocs("\n\n".join(parts) if parts else None, tuple(sources), tuple(warnings))
