"""The per-step ToolRouter: what the model is shown and what can be dispatched.

A router is built once per step from the registered tools and is immutable afterwards: the step that
advertised a tool is the step that executes it (spec/codex-runtime.md §5.3, §11.1). Each registered
tool has an exposure: ``direct`` (advertised and dispatchable) or ``hidden`` (dispatchable only).
Two tools with one name are a collision: the capture fails with ``ToolCollisionError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from mini_codex.errors import ToolError
from mini_codex.tools.base import Tool, ToolSpec

Exposure = Literal["direct", "hidden"]


class ToolCollisionError(ToolError):
    """Two registered tools share a model-visible name (``functions.<name>``)."""

    def __init__(self, qualified_name: str) -> None:
        super().__init__(f"tool name collision: {qualified_name}")
        self.qualified_name = qualified_name


@dataclass(frozen=True)
class RegisteredTool:
    tool: Tool
    exposure: Exposure = "direct"
    namespace: str | None = None
    """Model-visible namespace for grouping (``mcp__server``), or None for core tools."""
    namespace_description: str | None = None


@dataclass(frozen=True)
class ToolRouter:
    tools: Mapping[str, RegisteredTool]
    model_visible: tuple[ToolSpec, ...]

    @classmethod
    def build(cls, registered: Iterable[RegisteredTool]) -> ToolRouter:
        table: dict[str, RegisteredTool] = {}
        for entry in registered:
            name = entry.tool.spec.name
            if name in table:
                raise ToolCollisionError(f"{entry.namespace or 'functions'}.{name}")
            table[name] = entry
        visible = tuple(e.tool.spec for e in table.values() if e.exposure == "direct")
        return cls(tools=MappingProxyType(table), model_visible=visible)

    @classmethod
    def empty(cls) -> ToolRouter:
        return cls.build(())

    def model_visible_specs(self) -> tuple[dict[str, Any], ...]:
        """The Responses-API ``tools`` entries of this step, in registration order."""
        return tuple(spec.to_responses_tool() for spec in self.model_visible)

    def lookup(self, name: str) -> Tool | None:
        entry = self.tools.get(name)
        return entry.tool if entry is not None else None

    def supports_parallel(self, name: str) -> bool:
        tool = self.lookup(name)
        return tool is not None and tool.spec.supports_parallel

    def namespaces(self) -> dict[str, str]:
        """Namespace → one-line description, for the ``tools`` world-state section.

        Core tools form the ``functions`` namespace; MCP servers contribute ``mcp__<server>``.
        """
        members: dict[str, list[str]] = {}
        described: dict[str, str] = {}
        for name, entry in self.tools.items():
            if entry.exposure != "direct":
                continue
            key = entry.namespace or "functions"
            members.setdefault(key, []).append(name)
            if entry.namespace_description and key not in described:
                described[key] = entry.namespace_description
        return {
            key: described.get(key, "tools: " + ", ".join(sorted(names)))
            for key, names in members.items()
        }
