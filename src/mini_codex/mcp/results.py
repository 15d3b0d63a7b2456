"""What the model gets back from an MCP tool call (spec/codex-runtime.md §10 case 24). Pure.

* ``structuredContent`` present and not null → its compact JSON is the output;
* otherwise the JSON array of the ``content`` blocks (wire form: camelCase keys, unset fields
  omitted), e.g. ``[{"type":"text","text":"Echo: hi"}]``;
* ``isError: true`` → ``success = False`` (the output text is built the same way).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:  # the MCP types (~0.1 s to import) load with the first MCP use
    import mcp_types

__all__ = ["McpCallOutcome", "call_result_output"]


@dataclass(frozen=True)
class McpCallOutcome:
    """Text for the model and whether the call succeeded."""

    text: str
    success: bool
    result: dict[str, Any] | None = field(default=None, compare=False)
    """The call's ``content`` blocks and ``structured_content`` when the server answered, for
    front ends (``exec --json``); not part of equality: the model sees ``text``."""


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def call_result_output(result: mcp_types.CallToolResult) -> McpCallOutcome:
    success = not result.is_error
    blocks = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content
    ]
    raw = {"content": blocks, "structured_content": result.structured_content}
    if result.structured_content is not None:
        try:
            return McpCallOutcome(_dumps(result.structured_content), success, raw)
        except TypeError as exc:  # not JSON-encodable (cannot come from the wire, but be safe)
            return McpCallOutcome(f"unserializable structured content: {exc}", False)
    return McpCallOutcome(_dumps(blocks), success, raw)
