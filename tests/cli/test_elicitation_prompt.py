"""The exec terminal's elicitation prompt: fields typed in, converted, checked against the
schema (asked again until they match); declined without a terminal."""

from __future__ import annotations

import io

import pytest

from mini_codex.cli.elicitation_prompt import convert_field, terminal_elicitation
from mini_codex.mcp.elicitation import ElicitationAnswer, ElicitationRequest

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer", "minimum": 1},
        "agree": {"type": "boolean"},
    },
    "required": ["name"],
}
REQUEST = ElicitationRequest(server="s", message="Tell me", requested_schema=SCHEMA)


def test_fields_are_converted_to_their_type() -> None:
    assert convert_field({"type": "integer"}, "7") == 7
    assert convert_field({"type": "number"}, "2.5") == 2.5
    assert convert_field({"type": "boolean"}, "yes") is True
    assert convert_field({"type": "array"}, "a, b") == ["a", "b"]
    with pytest.raises(ValueError, match="expected yes or no"):
        convert_field({"type": "boolean"}, "maybe")


@pytest.mark.anyio
async def test_an_answer_is_asked_again_until_it_matches_the_schema() -> None:
    lines = iter(["a\n", "Ada\n", "x\n", "0\n", "y\n", "a\n", "Ada\n", "3\n", "\n"])
    err = io.StringIO()
    ask = terminal_elicitation(interactive=True, err=err, read_line=lambda: next(lines))
    assert await ask(REQUEST) == ElicitationAnswer("accept", {"name": "Ada", "count": 3})
    shown = err.getvalue()
    assert "MCP server s asks: Tell me" in shown
    assert "  invalid literal for int() with base 10: 'x'\n" in shown
    assert "  not accepted: count: 0 is less than the minimum of 1\n" in shown


@pytest.mark.anyio
async def test_without_a_terminal_the_request_is_declined_with_one_line() -> None:
    err = io.StringIO()
    ask = terminal_elicitation(interactive=False, err=err)
    assert await ask(REQUEST) == ElicitationAnswer("decline")
    assert err.getvalue() == (
        "mini-codex: MCP server s asked for input, declined (no terminal on stdin)\n"
    )
