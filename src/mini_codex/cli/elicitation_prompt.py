"""The ``exec`` terminal's answers to MCP elicitation requests (``mcp/elicitation.py``).

With a terminal on stdin the request is shown (server, message, fields) and the user chooses
``[a] answer  [d] decline  [c] cancel``; answering asks each field in turn (empty: left out, so
the server's default applies), converts it to the field's type and checks the whole answer
against the requested schema, asking again while it does not match. A URL request shows the URL
and ``[a]`` means "done". Without a terminal the request is declined with one line on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

import anyio

from mini_codex.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationHandler,
    ElicitationRequest,
    answer_problem,
    convert_field,
)

__all__ = ["convert_field", "terminal_elicitation"]


def terminal_elicitation(
    *,
    interactive: bool,
    err: TextIO | None = None,
    read_line: Callable[[], str] | None = None,
) -> ElicitationHandler:
    stream = err or sys.stderr
    reader = read_line or sys.stdin.readline

    async def ask_line(prompt: str) -> str | None:
        stream.write(prompt)
        stream.flush()
        line = await anyio.to_thread.run_sync(reader)
        return None if line == "" else line.rstrip("\n")

    async def no_terminal(request: ElicitationRequest) -> ElicitationAnswer:
        stream.write(
            f"mini-codex: MCP server {request.server} asked for input, declined "
            "(no terminal on stdin)\n"
        )
        stream.flush()
        return ElicitationAnswer.decline()

    async def fields(request: ElicitationRequest) -> dict[str, Any] | None:
        properties = request.requested_schema.get("properties") or {}
        content: dict[str, Any] = {}
        for name, spec in properties.items():
            spec = spec if isinstance(spec, dict) else {}
            while True:
                line = await ask_line(f"{name}: ")
                if line is None:
                    return None
                if not line:
                    break
                try:
                    content[name] = convert_field(spec, line)
                    break
                except ValueError as exc:
                    stream.write(f"  {exc}\n")
        return content

    async def ask(request: ElicitationRequest) -> ElicitationAnswer:
        stream.write(f"\n{request.describe()}\n")
        while True:
            choice = await ask_line("[a] answer  [d] decline  [c] cancel? ")
            if choice is None:
                return ElicitationAnswer.decline()  # the terminal closed
            match choice.strip().lower():
                case "a" if request.mode == "url":
                    return ElicitationAnswer("accept")
                case "a":
                    content = await fields(request)
                    if content is None:
                        return ElicitationAnswer.decline()
                    answer = ElicitationAnswer("accept", content)
                    problem = answer_problem(request, answer)
                    if problem is None:
                        return answer
                    stream.write(f"  not accepted: {problem}\n")
                case "d":
                    return ElicitationAnswer.decline()
                case "c":
                    return ElicitationAnswer("cancel")
                case _:
                    pass

    return ask if interactive else no_terminal
