"""A small stdio MCP server for the tests, written with the SDK's ``MCPServer``.

Tools: ``echo(text)``, ``add(a, b)`` (structured result), ``fail(message)`` (an error result),
``slow(seconds)``, ``crash()`` (the process exits mid-call), plus ``extra_<N>`` for every
``--extra N`` option (so a changed config gives a changed catalog).

``--delay SECONDS`` holds every message (the ``initialize`` request first) for that long before
the server starts answering; ``--delay inf`` never answers. Either way the process exits as soon
as its stdin closes, so a client can always shut it down quickly.
"""

from __future__ import annotations

import argparse
import math
import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server


def build(name: str, extras: list[str]) -> MCPServer:
    server = MCPServer(name, instructions=f"The {name} test server.")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def fail(message: str) -> str:
        """Always fails with the message."""
        raise ValueError(message)

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return "done"

    @server.tool()
    def crash() -> str:
        """Exit the server process in the middle of the call."""
        os._exit(3)

    for extra in extras:

        def extra_tool(extra: str = extra) -> str:
            return extra

        server.add_tool(extra_tool, name=f"extra_{extra}", description=f"Extra tool {extra}.")
    return server


async def serve(server: MCPServer, delay: float) -> None:
    lowlevel = server._lowlevel_server
    options = lowlevel.create_initialization_options()
    async with stdio_server() as (read, write):
        if delay <= 0:
            await lowlevel.run(read, write, options)
            return
        send, receive = anyio.create_memory_object_stream[object](math.inf)
        async with write, anyio.create_task_group() as group:

            async def pump() -> None:
                async with send:
                    async for message in read:
                        await send.send(message)
                group.cancel_scope.cancel()  # stdin closed: exit at once

            group.start_soon(pump)
            await anyio.sleep(delay)
            await lowlevel.run(receive, write, options)  # type: ignore[arg-type]
            group.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="toy")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--extra", action="append", default=[])
    args = parser.parse_args()
    anyio.run(serve, build(args.name, args.extra), args.delay)


if __name__ == "__main__":
    main()
