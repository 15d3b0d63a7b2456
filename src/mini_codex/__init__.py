"""mini-codex: a Python coding-agent runtime built on the contracts of OpenAI Codex.

The names below are the library's front door. They are imported lazily (PEP 562), so
``import mini_codex`` stays cheap and has no side effects; ``mini_codex.Session`` loads the
runtime (and the MCP and model SDKs) on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mini_codex._version import __version__

_EXPORTS: dict[str, str] = {
    "Session": "mini_codex.host",
    "SessionOptions": "mini_codex.host",
    "open_session": "mini_codex.host",
    "open_options": "mini_codex.host",
    "Config": "mini_codex.config",
    "load_config": "mini_codex.config",
    "ContextManager": "mini_codex.context",
    "WorldState": "mini_codex.world_state",
    "WorldStateSnapshot": "mini_codex.world_state",
    "create_merge_patch": "mini_codex.jsonmerge",
    "apply_merge_patch": "mini_codex.jsonmerge",
    "MiniCodexError": "mini_codex.errors",
    "Codex": "mini_codex.sdk",
    "CodexError": "mini_codex.sdk",
}

__all__ = [
    "Codex",
    "CodexError",
    "Config",
    "ContextManager",
    "MiniCodexError",
    "Session",
    "SessionOptions",
    "WorldState",
    "WorldStateSnapshot",
    "__version__",
    "apply_merge_patch",
    "create_merge_patch",
    "load_config",
    "open_options",
    "open_session",
]

if TYPE_CHECKING:
    from mini_codex.config import Config, load_config
    from mini_codex.context import ContextManager
    from mini_codex.errors import MiniCodexError
    from mini_codex.host import Session, SessionOptions, open_options, open_session
    from mini_codex.jsonmerge import apply_merge_patch, create_merge_patch
    from mini_codex.sdk import Codex, CodexError
    from mini_codex.world_state import WorldState, WorldStateSnapshot


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mini_codex' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
