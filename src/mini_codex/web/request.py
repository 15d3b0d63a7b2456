"""The model-visible request of a step, rebuilt from the rollout alone.

What belongs here: the ``input`` of a step's request — the history replay reconstructs from the
lines recorded before the request (world-state messages are history items, recorded before the
``world_state`` line that describes them, DESIGN I1), normalized as the runtime normalizes it
for a prompt — and its ``tools`` list where the rollout allows rebuilding it. What does not:
grouping lines into steps (``session_view.py``), HTTP.

Tools are not written to rollouts (the Codex line format has no place for them). The ``tools``
world-state section records the tool *namespaces*; when the only namespace is mini-codex's
built-in ``functions`` group, the list is rebuilt from the built-in tool specs of those names
(``tools_source: "rebuilt"``). Tools of MCP servers or custom tools cannot be rebuilt
(``tools_source: "not recorded"``, ``tools: null``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mini_codex.context.normalize import normalize_history
from mini_codex.jsonmerge import JsonObject
from mini_codex.protocol import RolloutLine
from mini_codex.rollout.replay import reconstruct_from_newest

__all__ = ["build_request"]

_BUILTIN_PREFIX = "tools: "


def build_request(
    lines: Sequence[RolloutLine], world_state: JsonObject | None, model: str | None
) -> dict[str, Any]:
    """The request sent after ``lines`` (the lines recorded before it, in file order)."""
    result = reconstruct_from_newest(reversed(lines))
    items = normalize_history(list(result.history))
    tools, source = _tools(world_state)
    return {
        "model": model,
        "input": [item.to_json() for item in items],
        "tools": tools,
        "tools_source": source,
        "warnings": list(result.warnings),
    }


def _tools(world_state: JsonObject | None) -> tuple[list[dict[str, Any]] | None, str]:
    section = (world_state or {}).get("tools")
    if not isinstance(section, dict) or set(section) != {"functions"}:
        return None, "not recorded"
    listing = section["functions"]
    if not isinstance(listing, str) or not listing.startswith(_BUILTIN_PREFIX):
        return None, "not recorded"
    names = [name.strip() for name in listing[len(_BUILTIN_PREFIX) :].split(",")]
    from mini_codex.config import Config
    from mini_codex.host.assemble import default_tools

    specs = {
        entry.tool.spec.name: entry.tool.spec.to_responses_tool()
        for entry in default_tools(Config())
    }
    if not all(name in specs for name in names):
        return None, "not recorded"
    ordered = [spec for name, spec in specs.items() if name in names]
    return ordered, "rebuilt"
