"""Routing ``exec_command`` and ``shell`` to the step's environments (issue 26 hook).

``EnvironmentRouted(tool)`` wraps a command tool when the step has a remote environment. With two
or more environments its schema gains Codex's ``environment_id`` parameter (one environment keeps
today's schema exactly). A call resolves its environment from the step's snapshot: omitted → the
primary (first ready) one, ``""`` → an error, an unknown id → "unknown turn environment id `X`",
a starting or failed one → Codex's "No usable execution environment is available. …". The local
environment runs the wrapped tool unchanged; a remote one runs the command on its executor
(``tools.remote_exec``: an ``exec_command`` that outlives its yield time is a unified exec session
that ``write_stdin`` reaches), a relative ``workdir`` resolving against that environment's cwd. An
executor that goes away mid-command gives that call an error output; the command is never started
twice.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from mini_codex.environments.client import ExecutorGone, ExecutorRequestError
from mini_codex.environments.manager import EnvironmentView
from mini_codex.protocol.exec_server import b64encode, file_uri
from mini_codex.tools.base import Tool, ToolContext, ToolOutput, ToolSpec
from mini_codex.tools.images import MAX_IMAGE_BYTES, image_mime_type
from mini_codex.tools.remote_exec import run_remote_command

__all__ = [
    "ENVIRONMENT_ID_PARAMETER",
    "NO_USABLE_ENVIRONMENT",
    "ROUTED_TOOLS",
    "EnvironmentRouted",
    "resolve_environment",
    "with_environment_id",
]

ENVIRONMENT_ID_PARAMETER: dict[str, Any] = {
    "type": "string",
    "description": (
        "Environment id from <environment_context>. Omit to use the primary environment."
    ),
}
NO_USABLE_ENVIRONMENT = (
    "No usable execution environment is available. Wait for an environment to become available "
    "before using this tool."
)
ROUTED_TOOLS = ("exec_command", "shell", "view_image")


def with_environment_id(spec: ToolSpec) -> ToolSpec:
    parameters = dict(spec.parameters or {"type": "object", "properties": {}})
    properties = dict(parameters.get("properties", {}))
    properties["environment_id"] = ENVIRONMENT_ID_PARAMETER
    parameters["properties"] = dict(sorted(properties.items()))
    return ToolSpec(
        name=spec.name,
        description=spec.description,
        kind=spec.kind,
        parameters=parameters,
        format=spec.format,
        supports_parallel=spec.supports_parallel,
    )


class EnvironmentRouted:
    def __init__(self, tool: Tool, *, advertise: bool) -> None:
        self.tool = tool
        self._spec = with_environment_id(tool.spec) if advertise else tool.spec

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        name = self.tool.spec.name
        try:
            args = json.loads(payload or "{}")
        except ValueError:
            return await self.tool.call(payload, ctx)  # the tool explains the bad JSON
        if not isinstance(args, dict):
            return await self.tool.call(payload, ctx)
        env_id = args.pop("environment_id", None)
        target = resolve_environment(ctx, name, env_id)
        if isinstance(target, ToolOutput):
            return target
        if target.is_local:
            return await self.tool.call(json.dumps(args), ctx)
        if name == "view_image":
            return await _view_remote(args, target)
        sessions = getattr(self.tool, "sessions", None)
        return await run_remote_command(name, args, ctx, target, sessions)


def resolve_environment(ctx: ToolContext, name: str, env_id: Any) -> EnvironmentView | ToolOutput:
    snapshot = ctx.environments
    if snapshot is None:
        return ToolOutput.failure(f"{name} is unavailable in this session")
    if env_id is not None and not isinstance(env_id, str):
        return ToolOutput.failure(f"{name}: environment_id must be a string")
    if env_id == "":
        return ToolOutput.failure(f"{name}: environment_id must be non-empty")
    target = snapshot.primary if env_id is None else snapshot.get(env_id)
    if target is None and env_id is not None:
        return ToolOutput.failure(f"unknown turn environment id `{env_id}`")
    if target is None or target.state != "ready":
        return ToolOutput.failure(NO_USABLE_ENVIRONMENT)
    return target


async def _view_remote(args: dict[str, Any], target: EnvironmentView) -> ToolOutput:
    """``view_image`` on a remote environment: size-checked, read through ``fs/readFile``."""
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return ToolOutput.failure("Invalid arguments for view_image:\n- path: Field required")
    full = posixpath.normpath(posixpath.join(target.cwd, path))
    assert target.client is not None
    try:
        meta = await target.client.request("fs/getMetadata", {"path": file_uri(full)})
        if not meta.get("isFile"):
            return ToolOutput.failure(f"view_image: {full} on `{target.id}` is not a file")
        size = meta.get("size")
        if isinstance(size, int) and size > MAX_IMAGE_BYTES:
            return ToolOutput.failure(
                f"view_image: {full} is {size} bytes (the limit is {MAX_IMAGE_BYTES})"
            )
        data = await target.client.read_file(full)
    except ExecutorRequestError as exc:
        return ToolOutput.failure(f"view_image: {full} on `{target.id}`: {exc.message}")
    except ExecutorGone as exc:
        return ToolOutput.failure(f"view_image: the executor of `{target.id}` went away ({exc})")
    mime = image_mime_type(data[:16])
    if mime is None:
        return ToolOutput.failure(f"view_image: {full} is not a PNG, JPEG, GIF or WebP image")
    url = f"data:{mime};base64,{b64encode(data)}"
    return ToolOutput(
        text=f"attached image {full} from `{target.id}`",
        success=True,
        content=({"type": "input_image", "image_url": url},),
    )
