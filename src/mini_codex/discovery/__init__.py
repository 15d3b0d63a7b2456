"""Discovery adapters (I/O): what the runtime learns from the file system each step.

* :class:`WorkspaceScanner` – the incremental, gitignore-aware file listing behind the
  ``workspace`` world-state section (``workspace.py``, rules compiled in ``gitignore.py``);
* :func:`load_agents_md` / :class:`AgentsMdCache` – AGENTS.md discovery from the project root down
  to the cwd, with a shared byte budget and a stat-validated cache (``agents_md.py``).

The pure values they produce live in ``mini_codex.world_state``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex._lazy import lazy_exports

if TYPE_CHECKING:
    from mini_codex.discovery.agents_md import (
        DEFAULT_FILENAME,
        DEFAULT_PROJECT_DOC_MAX_BYTES,
        DEFAULT_ROOT_MARKERS,
        LOCAL_OVERRIDE_FILENAME,
        PROJECT_DOC_SEPARATOR,
        AgentsMdCache,
        AgentsMdConfig,
        LoadedAgentsMd,
        discover_agents_md_paths,
        load_agents_md,
    )
    from mini_codex.discovery.workspace import DEFAULT_RACY_MARGIN_NS, ScanStats, WorkspaceScanner

__all__ = [
    "DEFAULT_FILENAME",
    "DEFAULT_PROJECT_DOC_MAX_BYTES",
    "DEFAULT_RACY_MARGIN_NS",
    "DEFAULT_ROOT_MARKERS",
    "LOCAL_OVERRIDE_FILENAME",
    "PROJECT_DOC_SEPARATOR",
    "AgentsMdCache",
    "AgentsMdConfig",
    "LoadedAgentsMd",
    "ScanStats",
    "WorkspaceScanner",
    "discover_agents_md_paths",
    "load_agents_md",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "DEFAULT_FILENAME": "mini_codex.discovery.agents_md",
        "DEFAULT_PROJECT_DOC_MAX_BYTES": "mini_codex.discovery.agents_md",
        "DEFAULT_ROOT_MARKERS": "mini_codex.discovery.agents_md",
        "LOCAL_OVERRIDE_FILENAME": "mini_codex.discovery.agents_md",
        "PROJECT_DOC_SEPARATOR": "mini_codex.discovery.agents_md",
        "AgentsMdCache": "mini_codex.discovery.agents_md",
        "AgentsMdConfig": "mini_codex.discovery.agents_md",
        "LoadedAgentsMd": "mini_codex.discovery.agents_md",
        "discover_agents_md_paths": "mini_codex.discovery.agents_md",
        "load_agents_md": "mini_codex.discovery.agents_md",
        "DEFAULT_RACY_MARGIN_NS": "mini_codex.discovery.workspace",
        "ScanStats": "mini_codex.discovery.workspace",
        "WorkspaceScanner": "mini_codex.discovery.workspace",
    },
)
