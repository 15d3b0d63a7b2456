"""MCP tools of a step as router entries: the ``Tool`` adapter over a step's ``McpBinding``.

Lives in ``runtime/`` because it joins two adapter packages (``tools.base`` and ``mcp``) that the
layer contract keeps independent of each other. Each tool is registered under the flattened
``mcp__<server>__<tool>`` (``mcp/naming.py``), the name Chat Completions and older rollouts call;
on the Responses wire it is advertised inside its server's ``namespace`` entry under the sanitized
tool name (``wire_name``), described by the server's instructions. Its namespace and the server's
one-line description group it in the ``tools`` world-state section. MCP calls are
parallel-capable: the calls of one response run concurrently, at most ``max_concurrent_calls``
per server (``mcp/client.py``). The resource tools come from ``mcp_resource_tools.py``. A call
decodes the function ``arguments`` (a JSON object) and goes through the binding the step
captured, never through the runtime's latest state.
"""

from __future__ import annotations

from typing import Any

import orjson

from mini_codex.mcp.binding import BoundTool, McpBinding
from mini_codex.runtime.mcp_resource_tools import resource_registered_tools
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

__all__ = ["McpTool", "mcp_registered_tools"]


class McpTool:
    """One MCP tool of one step's binding."""

    def __init__(self, binding: McpBinding, bound: BoundTool) -> None:
        self.binding = binding
        self.bound = bound
        self._spec = ToolSpec(
            name=bound.name,
            description=bound.description,
            kind="function",
            parameters=bound.parameters,
            supports_parallel=True,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        arguments: Any
        try:
            arguments = orjson.loads(payload) if payload.strip() else {}
        except orjson.JSONDecodeError:
            return ToolOutput.failure(
                f"Invalid arguments for {self.bound.name}: expected a JSON object, "
                f"got {payload[:200]!r}"
            )
        if not isinstance(arguments, dict):
            return ToolOutput.failure(
                f"Invalid arguments for {self.bound.name}: expected a JSON object, "
                f"got {type(arguments).__name__}"
            )
        outcome = await self.binding.call(self.bound.name, arguments)
        details = {
            "server": self.bound.qualified.server,
            "tool": self.bound.qualified.tool,
            "arguments": arguments,
            "result": outcome.result,
        }
        return ToolOutput(text=outcome.text, success=outcome.success, details=details)


def mcp_registered_tools(binding: McpBinding) -> list[RegisteredTool]:
    """Router entries for every tool of ``binding`` (hidden ones are callable, not advertised)."""
    return [
        RegisteredTool(
            McpTool(binding, bound),
            exposure="direct" if bound.visible else "hidden",
            namespace=bound.qualified.namespace,
            namespace_description=binding.namespaces.get(bound.qualified.namespace),
            wire_name=bound.qualified.name,
            wire_description=binding.instructions.get(bound.qualified.namespace),
        )
        for bound in binding.tools
    ] + resource_registered_tools(binding)
