"""The ``view_image`` tool (Codex's): attach a local image file to the conversation.

Arguments ``{"path": str}`` (relative to the turn's cwd, or absolute). The output sent to the
model is the image itself (an ``input_image`` part with a data URL; Chat providers get it as a
user message after the tool message). Unsupported formats, missing files and files over the size
limit are answered with a one-line reason. Parallel-capable (it only reads).
"""

from __future__ import annotations

from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec, parse_arguments
from mini_codex.tools.images import ImageError, image_data_url

__all__ = ["VIEW_IMAGE_PARAMETERS", "ViewImageTool"]

VIEW_IMAGE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Local filesystem path to an image file."}
    },
    "required": ["path"],
    "additionalProperties": False,
}


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    path: str = Field(min_length=1)


class ViewImageTool:
    def __init__(self) -> None:
        self._spec = ToolSpec(
            name="view_image",
            description=(
                "View a local image file from the filesystem when visual inspection is needed. "
                "Use this for images already available on disk."
            ),
            kind="function",
            parameters=VIEW_IMAGE_PARAMETERS,
            supports_parallel=True,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments("view_image", _Args, payload)
        if isinstance(args, ToolOutput):
            return args
        path = ctx.cwd / args.path
        try:
            url = await anyio.to_thread.run_sync(image_data_url, path)
        except ImageError as exc:
            return ToolOutput.failure(str(exc))
        return ToolOutput(
            text=f"attached image {path}",
            success=True,
            content=({"type": "input_image", "image_url": url},),
        )
