"""What a step discovers in its *remote* environments (issue 26): AGENTS.md and the workspace.

Only used when the step's snapshot has a remote environment; with ``local`` alone the capture is
exactly the classic one.

* ``environments_agents_md``: the docs of every ready environment — ``local``'s from the local
  loader (without the user instructions), a remote one's through its executor's ``fs/*``
  (``discovery.remote_agents_md``, once per connection: a reconnect reads them again) — composed
  the way Codex labels them (``world_state.sections.agents_md.compose_environment_docs``). A
  remote read that takes longer than ``deadline_s`` is left out of this step with a note and
  tried again on the next.
* ``executor_skills``: the skills of every ready remote environment's capability roots
  (``skills.executor``: each root discovered once per session through ``fs/*``; hidden, not
  forgotten, while its environment is not ready).
* ``primary_workspace``: the workspace file set of the primary environment: the local scan when
  it is ``local``, else its cwd listed through ``fs/readDirectory``
  (``discovery.remote_workspace``, once per turn and connection).
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import msgspec

from mini_codex.discovery.agents_md import AgentsMdConfig, LoadedAgentsMd
from mini_codex.discovery.remote_agents_md import RemoteDocs, load_remote_agents_md
from mini_codex.discovery.remote_workspace import RemoteListing, list_remote_workspace
from mini_codex.environments.client import ExecServerClient, ExecutorGone
from mini_codex.environments.manager import EnvironmentSnapshot, EnvironmentView
from mini_codex.skills.executor import (
    ExecutorSkill,
    ExecutorSkillsCache,
    discover_executor_skills,
    environment_roots,
)
from mini_codex.world_state.sections.agents_md import EnvironmentDocs, compose_environment_docs
from mini_codex.world_state.workspace_files import WorkspaceFiles

__all__ = [
    "EnvironmentCaches",
    "environments_agents_md",
    "executor_skills",
    "has_remote",
    "primary_workspace",
    "remote_agents_md_and_skills",
]

DEFAULT_REMOTE_DEADLINE_S = 5.0


class EnvironmentCaches(msgspec.Struct):
    """Per remote environment: what was read through which connection."""

    agents_md: dict[str, tuple[ExecServerClient, RemoteDocs]] = msgspec.field(default_factory=dict)
    workspace: dict[str, tuple[ExecServerClient, str, RemoteListing]] = msgspec.field(
        default_factory=dict
    )
    skills: ExecutorSkillsCache = msgspec.field(default_factory=ExecutorSkillsCache)


def has_remote(snapshot: EnvironmentSnapshot | None) -> bool:
    return snapshot is not None and any(not entry.is_local for entry in snapshot.entries)


async def _remote_docs(
    entry: EnvironmentView,
    config: AgentsMdConfig,
    caches: EnvironmentCaches,
    notes: list[str],
    deadline_s: float,
) -> RemoteDocs | None:
    client = entry.client
    assert client is not None
    cached = caches.agents_md.get(entry.id)
    if cached is not None and cached[0] is client:
        return cached[1]
    docs: RemoteDocs | None = None
    with anyio.move_on_after(deadline_s):
        try:
            docs = await load_remote_agents_md(client, entry.cwd, config)
        except ExecutorGone as exc:
            notes.append(f"reading AGENTS.md on `{entry.id}` failed: {exc}")
            return None
    if docs is None:
        notes.append(
            f"reading AGENTS.md on `{entry.id}` took longer than {deadline_s:g} s; "
            "it is not included in this request"
        )
        return None
    caches.agents_md[entry.id] = (client, docs)
    notes.extend(f"{entry.id}: {warning}" for warning in docs.warnings)
    return docs


async def environments_agents_md(
    snapshot: EnvironmentSnapshot,
    config: AgentsMdConfig,
    user_instructions: str | None,
    local_docs: Callable[[], LoadedAgentsMd],
    caches: EnvironmentCaches,
    notes: list[str],
    *,
    deadline_s: float = DEFAULT_REMOTE_DEADLINE_S,
) -> LoadedAgentsMd:
    parts: list[EnvironmentDocs] = []
    sources: list[str] = []
    for entry in snapshot.entries:
        if entry.state != "ready":
            continue
        if entry.is_local:
            local = await anyio.to_thread.run_sync(local_docs)
            notes.extend(local.warnings)
            if local.text:
                parts.append((entry.id, entry.cwd, local.text))
                sources.extend(local.sources)
            continue
        docs = await _remote_docs(entry, config, caches, notes, deadline_s)
        if docs is not None and docs.text:
            parts.append((entry.id, entry.cwd, docs.text))
            sources.extend(f"{entry.id}:{source}" for source in docs.sources)
    directory, text, present = compose_environment_docs(user_instructions, parts)
    return LoadedAgentsMd(
        directory=directory, text=text, sources=tuple(sources), environments=present
    )


async def primary_workspace(
    snapshot: EnvironmentSnapshot,
    turn_id: str,
    caches: EnvironmentCaches,
    notes: list[str],
    local: WorkspaceFiles | None,
) -> WorkspaceFiles | None:
    """The primary's file set: ``local`` when it is ``local``; None when there is none."""
    primary = snapshot.primary
    if primary is not None and primary.is_local:
        return local
    if primary is None or primary.client is None:
        return None
    cached = caches.workspace.get(primary.id)
    if cached is not None and cached[0] is primary.client and cached[1] == turn_id:
        return cached[2].files
    try:
        listing = await list_remote_workspace(primary.client, primary.cwd)
    except ExecutorGone as exc:
        notes.append(f"listing the workspace files of `{primary.id}` failed: {exc}")
        return cached[2].files if cached is not None else None
    caches.workspace[primary.id] = (primary.client, turn_id, listing)
    notes.extend(f"{primary.id}: {warning}" for warning in listing.warnings)
    return listing.files


async def executor_skills(
    snapshot: EnvironmentSnapshot,
    caches: EnvironmentCaches,
    warn: Callable[[str], None] | None,
    *,
    deadline_s: float = DEFAULT_REMOTE_DEADLINE_S,
) -> tuple[ExecutorSkill, ...]:
    found: list[ExecutorSkill] = []
    for entry in snapshot.entries:
        if entry.is_local or entry.state != "ready" or entry.client is None:
            continue
        for root in environment_roots(entry.cwd, entry.capability_roots):
            key = (entry.id, root)
            if key not in caches.skills.found:
                skills: tuple[ExecutorSkill, ...] | None = None
                warnings: tuple[str, ...] = ()
                with anyio.move_on_after(deadline_s):
                    try:
                        skills, warnings = await discover_executor_skills(
                            entry.client, entry.id, root
                        )
                    except ExecutorGone:
                        skills = None
                if skills is None:
                    continue  # tried again on the next step
                caches.skills.found[key] = skills
                if warn is not None:
                    for warning in warnings:
                        warn(warning)
            found.extend(caches.skills.found[key])
    return tuple(found)


async def remote_agents_md_and_skills(
    snapshot: EnvironmentSnapshot,
    config: AgentsMdConfig,
    user_instructions: str | None,
    local_docs: Callable[[], LoadedAgentsMd],
    caches: EnvironmentCaches,
    notes: list[str],
    warn: Callable[[str], None] | None,
) -> tuple[LoadedAgentsMd, tuple[ExecutorSkill, ...]]:
    """The step's AGENTS.md (``environments_agents_md``) and executor skills."""
    agents_md = await environments_agents_md(
        snapshot, config, user_instructions, local_docs, caches, notes
    )
    return agents_md, await executor_skills(snapshot, caches, warn)
