"""Discovery adapters (I/O): what the runtime learns from the file system each step.

* :class:`WorkspaceScanner` – the incremental, gitignore-aware file listing behind the
  ``workspace`` world-state section (``workspace.py``, rules compiled in ``gitignore.py``);
* :func:`load_agents_md` / :class:`AgentsMdCache` – AGENTS.md discovery from the project root down
  to the cwd, with a shared byte budget and a stat-validated cache (``agents_md.py``).

The pure values they produce live in ``mini_codex.world_state``.
"""

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
