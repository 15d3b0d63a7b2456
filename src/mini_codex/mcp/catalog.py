"""A server's tool catalog and what the model is shown of it (spec/codex-runtime.md §5.7). Pure.

* ``ServerCatalog``: the raw tools a server listed, plus its title and instructions, whether it
  declares resources and the prompts it lists; JSON-encodable
  so it can be cached on disk (``cache.py``) and advertised while the server is still starting.
* ``filter_tools``: the per-server ``enabled_tools`` allow-list, then the ``disabled_tools``
  deny-list (applied before naming).
* ``is_model_visible``: a tool whose ``_meta.ui.visibility`` exists and lacks ``"model"`` is
  callable but not advertised.
* ``model_parameters``: the input schema the model sees, reduced to the JSON-schema subset Codex
  0.169 sends (``type``, ``description``, ``enum``, ``const``, ``items``, ``properties`` in name
  order, ``required``, ``additionalProperties``, ``anyOf``; ``$schema``, ``default``, ``title``,
  ``format``, bounds and the rest are left out, as in ``tests/fixtures/codex_mcp``); parameters
  listed in ``_meta["openai/fileParams"]`` are masked to a plain absolute-path string (or array
  of them).
* ``namespace_description``: the one line the ``tools`` world-state section shows per server.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
from pydantic import ValidationError

from mini_codex.config import McpServerConfig

if TYPE_CHECKING:  # the MCP types (~0.1 s to import) load with the first MCP use
    import mcp_types

__all__ = [
    "ServerCatalog",
    "filter_tools",
    "is_model_visible",
    "model_parameters",
    "namespace_description",
]

_FILE_PARAM_DESCRIPTION = "An absolute local file path."
_FILE_LIST_DESCRIPTION = "Absolute local file paths."


class ServerCatalog(msgspec.Struct, frozen=True):
    tools: tuple[mcp_types.Tool, ...]
    title: str | None = None
    """The server's self-reported title (or name), if any."""
    instructions: str | None = None
    resources: bool = False
    """The server declares the ``resources`` capability (the resource tools are offered)."""
    prompts: tuple[mcp_types.Prompt, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "instructions": self.instructions,
            "resources": self.resources,
            "tools": [
                tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                for tool in self.tools
            ],
            "prompts": [
                prompt.model_dump(mode="json", by_alias=True, exclude_none=True)
                for prompt in self.prompts
            ],
        }

    @classmethod
    def from_json(cls, data: Any) -> ServerCatalog:
        """Decode ``to_json`` output; raises ``ValueError`` on anything else."""
        if not isinstance(data, dict) or not isinstance(data.get("tools"), list):
            raise ValueError("not a server catalog")
        title, instructions = data.get("title"), data.get("instructions")
        if not isinstance(title, str | None) or not isinstance(instructions, str | None):
            raise ValueError("bad title or instructions")
        import mcp_types

        try:
            tools = tuple(mcp_types.Tool.model_validate(tool) for tool in data["tools"])
            prompts = tuple(
                mcp_types.Prompt.model_validate(prompt) for prompt in data.get("prompts") or ()
            )
        except ValidationError as exc:
            raise ValueError(f"bad tool in catalog: {exc.error_count()} error(s)") from exc
        return cls(
            tools=tools,
            title=title,
            instructions=instructions,
            resources=data.get("resources") is True,
            prompts=prompts,
        )


def filter_tools(
    config: McpServerConfig, tools: Iterable[mcp_types.Tool]
) -> tuple[mcp_types.Tool, ...]:
    allowed = set(config.enabled_tools) if config.enabled_tools is not None else None
    denied = set(config.disabled_tools)
    return tuple(
        tool
        for tool in tools
        if (allowed is None or tool.name in allowed) and tool.name not in denied
    )


def is_model_visible(tool: mcp_types.Tool) -> bool:
    meta = tool.meta or {}
    ui = meta.get("ui")
    if not isinstance(ui, dict) or "visibility" not in ui:
        return True
    visibility = ui["visibility"]
    return isinstance(visibility, list) and "model" in visibility


_KEPT_KEYS = ("type", "description", "enum", "const")
_SCHEMA_LIST_KEYS = ("anyOf",)


def codex_schema(schema: Any) -> Any:
    """``schema`` reduced to the subset Codex sends (see the module docstring)."""
    if not isinstance(schema, dict):
        return schema
    reduced: dict[str, Any] = {key: schema[key] for key in _KEPT_KEYS if key in schema}
    if "items" in schema:
        reduced["items"] = codex_schema(schema["items"])
    properties = schema.get("properties")
    if isinstance(properties, dict):
        reduced["properties"] = {
            name: codex_schema(properties[name]) for name in sorted(properties)
        }
    if "required" in schema:
        reduced["required"] = schema["required"]
    additional = schema.get("additionalProperties")
    if additional is not None:
        reduced["additionalProperties"] = codex_schema(additional)
    for key in _SCHEMA_LIST_KEYS:
        if isinstance(schema.get(key), list):
            reduced[key] = [codex_schema(part) for part in schema[key]]
    return reduced


def model_parameters(tool: mcp_types.Tool) -> dict[str, Any]:
    schema = tool.input_schema
    if not isinstance(schema, dict) or schema.get("type") != "object":
        schema = {"type": "object", "properties": {}}
    schema = codex_schema(schema)
    if "properties" not in schema:
        schema = {**schema, "properties": {}}
    file_params = (tool.meta or {}).get("openai/fileParams")
    if not isinstance(file_params, list) or not file_params:
        return schema
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    masked = copy.deepcopy(schema)
    for name in file_params:
        if not isinstance(name, str) or name not in properties:
            continue
        original = properties[name]
        is_list = isinstance(original, dict) and original.get("type") == "array"
        masked["properties"][name] = (
            {
                "type": "array",
                "items": {"type": "string"},
                "description": _FILE_LIST_DESCRIPTION,
            }
            if is_list
            else {"type": "string", "description": _FILE_PARAM_DESCRIPTION}
        )
    return masked


def namespace_description(server: str, title: str | None, tool_names: Sequence[str]) -> str:
    """``MCP server everything (Everything Reference Server); tools: echo, get-sum``."""
    head = f"MCP server {server}"
    if title and title != server:
        head += f" ({title})"
    if not tool_names:
        return head + "; no tools"
    return head + "; tools: " + ", ".join(sorted(tool_names))
