"""An MCP tool call through a real stdio MCP server (mcp-server-time) shows as an MCP cell, and
``/mcp`` lists the server's state."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tui_helpers import idle, type_and_send, wait_for

from mini_codex.config import McpServerConfig
from mini_codex.testing import ScriptedResponse, assistant, function_call
from mini_codex.tui.run import ui_harness

pytestmark = pytest.mark.anyio

TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


async def test_an_mcp_call_cell_and_the_mcp_command(make_harness) -> None:
    harness = make_harness(
        [
            ScriptedResponse(
                [function_call("mcp__time__get_current_time", {"timezone": "UTC"}, "m1")]
            ),
            ScriptedResponse([assistant("it is now")]),
        ]
    )
    harness.mcp_servers = {
        "time": McpServerConfig(
            command=str(TIME_SERVER), args=("--local-timezone", "UTC"), required=True
        )
    }
    app = harness.app(prompt="what time is it?")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: "it is now" in app.transcript_lines(), limit_s=30)
        cell = next(x for x in app.transcript_lines() if x.startswith("⚙ mcp "))
        title, *_, result = cell.splitlines()
        assert title == '⚙ mcp time.get_current_time {"timezone": "UTC"}'
        assert cell.splitlines()[1].startswith('{"timezone":"UTC","datetime":')  # its answer
        assert result.startswith("✓ done · ")
        await wait_for(pilot, lambda: idle(app))
        await type_and_send(pilot, "/mcp")
        await wait_for(pilot, lambda: app.transcript_lines()[-1].startswith("MCP servers"))
        assert app.transcript_lines()[-1] == "MCP servers\n  time                 ready"
