"""``mcp-server-time`` from PyPI (a dev dependency) over stdio, through a step binding."""

from __future__ import annotations

import json
import sys

import pytest

from mini_codex.config import McpServerConfig
from mini_codex.mcp.results import McpCallOutcome
from mini_codex.mcp.runtime import McpRuntime

pytestmark = pytest.mark.anyio


async def test_time_server_converts_times_and_reports_bad_zones_as_failures() -> None:
    config = McpServerConfig(
        command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC")
    )
    async with McpRuntime.open({"time": config}) as runtime:
        binding = await runtime.binding_for_step(required={"time"})
        assert [tool.name for tool in binding.tools] == [
            "mcp__time__convert_time",
            "mcp__time__get_current_time",
        ]
        converted = await binding.call(
            "mcp__time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert converted.success
        result = json.loads(converted.text)  # structured content, as compact JSON
        day = result["source"]["datetime"][:10]
        assert result == {
            "source": {
                "timezone": "UTC",
                "datetime": f"{day}T12:00:00+00:00",
                "day_of_week": result["source"]["day_of_week"],
                "is_dst": False,
            },
            "target": {
                "timezone": "Asia/Tokyo",
                "datetime": f"{day}T21:00:00+09:00",
                "day_of_week": result["source"]["day_of_week"],
                "is_dst": False,
            },
            "time_difference": "+9.0h",
        }
        bad = await binding.call("mcp__time__get_current_time", {"timezone": "Nowhere/City"})
        assert bad == McpCallOutcome(
            '[{"type":"text","text":"Error executing tool get_current_time: '
            "Invalid timezone: 'No time zone found with key Nowhere/City'\"}]",
            False,
        )
