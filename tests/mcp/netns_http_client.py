"""Run inside a loopback-only network namespace next to a streamable HTTP MCP server: connect
through ``McpRuntime`` to ``http://127.0.0.1:PORT/mcp``, call two tools through a step binding,
print one JSON line with what the model would see. Used by ``test_mcp_everything.py``.

Usage: ``python netns_http_client.py PORT``.
"""

from __future__ import annotations

import json
import socket
import sys
import time

import anyio

from mini_codex.config import McpServerConfig
from mini_codex.mcp.runtime import McpRuntime


def wait_for_port(port: int, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


async def main(port: int) -> None:
    config = McpServerConfig(
        url=f"http://127.0.0.1:{port}/mcp", headers={"X-Mini-Codex-Test": "1"}, required=True
    )
    async with McpRuntime.open({"everything": config}) as runtime:
        await runtime.wait_for_required()
        binding = await runtime.binding_for_step()
        echo = await binding.call("mcp__everything__echo", {"message": "over http"})
        total = await binding.call("mcp__everything__get_sum", {"a": 2, "b": 40})
    report = {
        "tools": sorted(tool.name for tool in binding.tools),
        "echo": [echo.text, echo.success],
        "sum": [total.text, total.success],
    }
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    port = int(sys.argv[1])
    wait_for_port(port)
    anyio.run(main, port)
