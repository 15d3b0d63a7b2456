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

import msgspec

from mini_codex.errors import ToolError
from mini_codex.tools.base import Tool, ToolSpec

Exposure = Literal["direct", "hidden"]


class ToolCollisionError(ToolError):
    """Two registered tools share a model-visible name (``functions.<name>``)."""

    def __init__(self, qualified_name: str) -> None:
        super().__init__(f"tool name collision: {qualified_name}")
        self.qualified_name = qualified_name


class RegisteredTool(msgspec.Struct, frozen=True):
    tool: Tool
    exposure: Exposure = "direct"
    namespace: str | None = None
    """Model-visible namespace for grouping (``mcp__server``), or None for core tools."""
    namespace_description: str | None = None
    wire_name: str | None = None
    """The tool's name inside its namespace on the Responses wire (MCP tools: the sanitized tool
    name); set with ``namespace``, the tool is advertised in a ``{"type": "namespace"}`` entry
    and called back as ``{"name": wire_name, "namespace": namespace}``."""
    wire_description: str | None = None
    """The namespace entry's description (the server's instructions, or a default)."""


def default_namespace_description(namespace: str) -> str:
    return f"Tools in the {namespace} namespace."


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

    def _wire_entries(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        groups: dict[str, list[dict[str, Any]]] = {}
        for entry in self.tools.values():
            if entry.exposure != "direct":
                continue
            spec = entry.tool.spec.to_responses_tool()
            if entry.namespace is None or entry.wire_name is None:
                entries.append(spec)
                continue
            members = groups.get(entry.namespace)
            if members is None:
                members = groups[entry.namespace] = []
                description = entry.wire_description or ""
                entries.append(
                    {
                        "type": "namespace",
                        "name": entry.namespace,
                        "description": description.strip()
                        or default_namespace_description(entry.namespace),
                        "tools": members,
                    }
                )
            members.append({**spec, "name": entry.wire_name})
        return entries

    @classmethod
    def empty(cls) -> ToolRouter:
        return cls.build(())

    def model_visible_specs(self) -> tuple[dict[str, Any], ...]:
        """The Responses-API ``tools`` entries of this step, in registration order.

        Namespaced tools (MCP) form one ``{"type": "namespace", "name", "description", "tools"}``
        entry per namespace, at the place of its first tool, as Codex 0.169 sends them; Chat
        Completions flattens them back to ``<namespace>__<name>`` (``models/chat_completions``).
        """
        cached = self.__dict__.get("_wire_cache")
        if cached is None:
            cached = tuple(self._wire_entries())
            object.__setattr__(self, "_wire_cache", cached)
        return cached

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
