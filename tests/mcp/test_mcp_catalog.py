"""Catalog helpers, call-result conversion (spec §10 case 24) and the on-disk catalog cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types
import pytest

from mini_codex.config import McpServerConfig
from mini_codex.mcp.cache import CatalogCache
from mini_codex.mcp.catalog import (
    ServerCatalog,
    filter_tools,
    is_model_visible,
    model_parameters,
    namespace_description,
)
from mini_codex.mcp.results import McpCallOutcome, call_result_output


def tool(name: str, **fields: Any) -> mcp_types.Tool:
    fields.setdefault("input_schema", {"type": "object", "properties": {}})
    return mcp_types.Tool(name=name, **fields)


# --- case 24 -----------------------------------------------------------------------------------


def test_structured_content_wins_over_content() -> None:
    result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="ignored")],
        structured_content={"temperature": 33, "conditions": "Cloudy"},
    )
    assert call_result_output(result) == McpCallOutcome(
        '{"temperature":33,"conditions":"Cloudy"}', True
    )


def test_null_structured_content_falls_back_to_the_content_json() -> None:
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(type="text", text="Echo: hi"),
            mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
        ]
    )
    assert call_result_output(result) == McpCallOutcome(
        '[{"type":"text","text":"Echo: hi"},{"type":"image","data":"AAAA","mimeType":"image/png"}]',
        True,
    )


def test_is_error_means_failure_with_the_same_text() -> None:
    result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="boom")], is_error=True
    )
    assert call_result_output(result) == McpCallOutcome('[{"type":"text","text":"boom"}]', False)


# --- catalog -----------------------------------------------------------------------------------


def test_enabled_tools_then_disabled_tools_filter_by_raw_name() -> None:
    tools = [tool("a"), tool("b"), tool("c")]
    allow = McpServerConfig(command="x", enabled_tools=("a", "b"), disabled_tools=("b",))
    deny = McpServerConfig(command="x", disabled_tools=("c",))
    assert [t.name for t in filter_tools(allow, tools)] == ["a"]
    assert [t.name for t in filter_tools(deny, tools)] == ["a", "b"]


@pytest.mark.parametrize(
    ("meta", "visible"),
    [
        (None, True),
        ({"ui": {"resourceUri": "ui://x"}}, True),
        ({"ui": {"visibility": ["model", "app"]}}, True),
        ({"ui": {"visibility": ["app"]}}, False),
        ({"ui": {"visibility": []}}, False),
    ],
)
def test_ui_visibility_without_model_hides_a_tool(meta: Any, visible: bool) -> None:
    assert is_model_visible(tool("t", _meta=meta)) is visible


def test_file_params_are_masked_in_the_model_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "file": {"type": "object", "properties": {"download_url": {"type": "string"}}},
            "files": {"type": "array", "items": {"type": "object"}},
            "note": {"type": "string"},
        },
    }
    masked = model_parameters(
        tool("upload", input_schema=schema, _meta={"openai/fileParams": ["file", "files"]})
    )
    assert masked == {
        "type": "object",
        "properties": {
            "file": {"type": "string", "description": "An absolute local file path."},
            "files": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Absolute local file paths.",
            },
            "note": {"type": "string"},
        },
    }
    assert schema["properties"]["file"]["type"] == "object"  # the input is not mutated


def test_namespace_description_names_the_server_and_its_tools() -> None:
    assert namespace_description("everything", "Everything Server", ["get-sum", "echo"]) == (
        "MCP server everything (Everything Server); tools: echo, get-sum"
    )
    assert namespace_description("t", "t", []) == "MCP server t; no tools"


# --- cache -------------------------------------------------------------------------------------


def test_cache_round_trips_a_catalog_per_launch_configuration(tmp_path: Path) -> None:
    cache = CatalogCache(tmp_path / "mcp_cache")
    config = McpServerConfig(command="srv", args=("--a",))
    catalog = ServerCatalog(
        tools=(tool("echo", description="Echo.", _meta={"ui": {"visibility": ["app"]}}),),
        title="Srv",
        instructions="Use it.",
    )
    assert cache.load("srv", config) is None
    cache.store("srv", config, catalog)
    assert cache.load("srv", config) == catalog
    assert cache.load("srv", McpServerConfig(command="srv", args=("--b",))) is None
    assert cache.load("other", config) is None


def test_a_corrupt_cache_file_is_no_cache(tmp_path: Path) -> None:
    cache = CatalogCache(tmp_path)
    config = McpServerConfig(url="http://127.0.0.1:1/mcp")
    path = cache.path_for("srv", config)
    for content in (b"{not json", b"[]", b'{"version": 1, "server": "srv", "catalog": {}}'):
        path.write_bytes(content)
        assert cache.load("srv", config) is None
