"""The model's resource tools: names, argument schemas and output shapes (Codex 0.169). Pure.

Codex offers three function tools when a server of the step declares the ``resources``
capability (recorded in ``tests/fixtures/codex_mcp/``):

* ``list_mcp_resources {server?, cursor?}`` → ``{"resources": [...], "nextCursor"?}``; with a
  ``server`` the object also starts with ``"server"``. Each resource is the MCP wire object
  (camelCase, unset fields omitted) with ``"server"`` first.
* ``list_mcp_resource_templates {server?, cursor?}`` → the same with ``"resourceTemplates"``.
* ``read_mcp_resource {server, uri}`` → ``{"server", "uri", "contents": [...]}``; a binary
  resource's content keeps its base64 ``blob`` as the server sent it.

A ``cursor`` needs a ``server`` (the cursor of one server means nothing to another). Outputs are
compact JSON, keys in the order above.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

import orjson

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "LIST_RESOURCES",
    "LIST_TEMPLATES",
    "READ_RESOURCE",
    "RESOURCE_TOOL_NAMES",
    "listing_output",
    "read_output",
    "resource_tool_parameters",
    "wire_json",
]

LIST_RESOURCES: Final = "list_mcp_resources"
LIST_TEMPLATES: Final = "list_mcp_resource_templates"
READ_RESOURCE: Final = "read_mcp_resource"
RESOURCE_TOOL_NAMES: Final = (LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE)

_KEY_ORDER: Final = ("uri", "uriTemplate", "name", "title", "description", "mimeType", "size")


def _listing_schema(what: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "cursor": {
                "type": "string",
                "description": f"The cursor a previous call returned as nextCursor, to get "
                f"the next page of {what}; leave it out for the first page.",
            },
            "server": {
                "type": "string",
                "description": f"Name of the MCP server whose {what} to list; leave it out "
                "for all servers.",
            },
        },
        "additionalProperties": False,
    }


def resource_tool_parameters(name: str) -> dict[str, Any]:
    """The argument schema of one resource tool."""
    if name == LIST_RESOURCES:
        return _listing_schema("resources")
    if name == LIST_TEMPLATES:
        return _listing_schema("resource templates")
    return {
        "type": "object",
        "properties": {
            "server": {
                "type": "string",
                "description": "Name of the MCP server, as in the server field of "
                "list_mcp_resources.",
            },
            "uri": {
                "type": "string",
                "description": "URI of the resource, as listed by list_mcp_resources (or a "
                "resource template filled in).",
            },
        },
        "required": ["server", "uri"],
        "additionalProperties": False,
    }


def wire_json(model: BaseModel) -> dict[str, Any]:
    """An MCP object in its wire form, the usual keys first."""
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    ordered: dict[str, Any] = {key: data.pop(key) for key in _KEY_ORDER if key in data}
    ordered.update(data)
    return ordered


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def listing_output(
    key: str,
    entries: Iterable[tuple[str, BaseModel]],
    *,
    server: str | None,
    next_cursor: str | None = None,
) -> str:
    """``{"server"?, key: [{"server", ...}], "nextCursor"?}`` for ``(server, object)`` pairs."""
    body: dict[str, Any] = {} if server is None else {"server": server}
    body[key] = [{"server": name, **wire_json(entry)} for name, entry in entries]
    if next_cursor is not None:
        body["nextCursor"] = next_cursor
    return _dumps(body)


def read_output(server: str, uri: str, contents: Sequence[BaseModel]) -> str:
    return _dumps({"server": server, "uri": uri, "contents": [wire_json(c) for c in contents]})
