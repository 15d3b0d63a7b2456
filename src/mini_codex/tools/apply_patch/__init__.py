"""The ``apply_patch`` tool: Codex's patch envelope, applied all or nothing inside the sandbox.

Two forms with the same name; the router picks one per provider: a freeform custom tool whose
input is constrained by a Lark grammar (``ApplyPatchTool(freeform=True)``) and a function tool
taking ``{"input": "<patch>"}``. Both run ``parser.parse_patch`` then ``apply.apply_patch`` (in a
worker thread, so a cancelled call still finishes or rolls back its writes).
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from mini_codex.tools.apply_patch.apply import (
    ApplyResult,
    FileChange,
    PatchApplyError,
    apply_patch,
)
from mini_codex.tools.apply_patch.content import HunkMismatchError, apply_chunks, seek_sequence
from mini_codex.tools.apply_patch.parser import (
    AddFile,
    DeleteFile,
    Hunk,
    Patch,
    PatchParseError,
    UpdateChunk,
    UpdateFile,
    parse_patch,
)
from mini_codex.tools.base import (
    ToolContext,
    ToolOutput,
    ToolSpec,
    load_tool_prompt,
    parse_arguments,
)

__all__ = [
    "APPLY_PATCH_PARAMETERS",
    "AddFile",
    "ApplyPatchTool",
    "ApplyResult",
    "DeleteFile",
    "FileChange",
    "Hunk",
    "HunkMismatchError",
    "Patch",
    "PatchApplyError",
    "PatchParseError",
    "UpdateChunk",
    "UpdateFile",
    "apply_chunks",
    "apply_patch",
    "parse_patch",
    "seek_sequence",
]

APPLY_PATCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "input": {
            "type": "string",
            "description": "The whole patch, from '*** Begin Patch' to '*** End Patch'.",
        }
    },
    "required": ["input"],
    "additionalProperties": False,
}


class _ApplyPatchArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    input: str


class ApplyPatchTool:
    """``apply_patch`` as a freeform (grammar) custom tool or as a function tool."""

    def __init__(self, *, freeform: bool) -> None:
        self.freeform = freeform
        description = load_tool_prompt("apply_patch.md")
        if freeform:
            self._spec = ToolSpec(
                name="apply_patch",
                description=description,
                kind="custom",
                format={
                    "type": "grammar",
                    "syntax": "lark",
                    "definition": load_tool_prompt("apply_patch.lark") + "\n",
                },
            )
        else:
            self._spec = ToolSpec(
                name="apply_patch",
                description=description + "\n\n" + load_tool_prompt("apply_patch_json.md"),
                kind="function",
                parameters=APPLY_PATCH_PARAMETERS,
            )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        if self.freeform:
            text = payload
        else:
            args = parse_arguments("apply_patch", _ApplyPatchArgs, payload)
            if isinstance(args, ToolOutput):
                return args
            text = args.input
        try:
            patch = parse_patch(text)
        except PatchParseError as exc:
            return ToolOutput.failure(f"apply_patch failed: {exc}\nNo files were changed.")
        run = functools.partial(
            apply_patch, patch, cwd=ctx.cwd, policy=ctx.sandbox, sandbox_tmp=ctx.sandbox_tmp
        )
        try:
            result = await anyio.to_thread.run_sync(run)
        except PatchApplyError as exc:
            tail = "\nNo files were changed." if exc.changed_nothing else ""
            return ToolOutput.failure(f"apply_patch failed: {exc}{tail}")
        return ToolOutput(text=result.summary(), success=True)
