"""Routing ``exec_command`` and ``shell`` to the step's environments (issue 26 hook).

``EnvironmentRouted(tool)`` wraps a command tool when the step has a remote environment. With two
or more environments its schema gains Codex's ``environment_id`` parameter (one environment keeps
today's schema exactly). A call resolves its environment from the step's snapshot: omitted → the
primary (first ready) one, ``""`` → an error, an unknown id → "unknown turn environment id `X`",
a starting or failed one → Codex's "No usable execution environment is available. …". The local
environment runs the wrapped tool unchanged; a remote one runs the command on its executor
(``process/start`` with the executor's own environment and the turn's sandbox policy), a relative
``workdir`` resolving against that environment's cwd. An executor that goes away mid-command gives
that call an error output; the command is never started twice.
"""

from __future__ import annotations

import json
import posixpath
import time
from typing import Any

from mini_codex.environments.client import ExecutorGone, ExecutorRequestError
from mini_codex.environments.manager import EnvironmentView
from mini_codex.protocol.exec_server_codec import b64encode, file_uri
from mini_codex.sandbox.exec import shell_argv
from mini_codex.tools.base import Tool, ToolContext, ToolOutput, ToolSpec
from mini_codex.tools.images import MAX_IMAGE_BYTES, image_mime_type
from mini_codex.tools.unified_exec.tools import format_unified_output

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
_DEFAULT_EXEC_YIELD_MS = 10_000
_DEFAULT_SHELL_TIMEOUT_MS = 120_000


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
        return await _run_remote(name, args, ctx, target)


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


async def _run_remote(
    name: str, args: dict[str, Any], ctx: ToolContext, target: EnvironmentView
) -> ToolOutput:
    command = args.get("cmd" if name == "exec_command" else "command")
    if not isinstance(command, str) or not command:
        field = "cmd" if name == "exec_command" else "command"
        return ToolOutput.failure(f"Invalid arguments for {name}:\n- {field}: Field required")
    if args.get("sandbox_permissions") == "require_escalated":
        return ToolOutput.failure(
            f"{name}: require_escalated is not available on the remote environment "
            f"`{target.id}`; the command runs under its sandbox policy"
        )
    workdir = args.get("workdir")
    cwd = target.cwd
    if isinstance(workdir, str) and workdir:
        cwd = posixpath.normpath(posixpath.join(target.cwd, workdir))
    if name == "exec_command":
        wait_ms = args.get("yield_time_ms") or _DEFAULT_EXEC_YIELD_MS
    else:
        wait_ms = args.get("timeout_ms") or _DEFAULT_SHELL_TIMEOUT_MS
    sandbox = None
    if ctx.sandbox.mode != "danger-full-access":
        sandbox = ctx.sandbox.model_dump(mode="json")
    assert target.client is not None
    started = time.monotonic()
    try:
        result = await target.client.run_process(
            shell_argv(f"/bin/{target.shell}" if target.shell else "/bin/sh", command),
            cwd,
            sandbox=sandbox,
            timeout_s=float(wait_ms) / 1000,
        )
    except ExecutorGone as exc:
        return ToolOutput.failure(
            f"{name}: the executor of environment `{target.id}` went away while the command "
            f"ran ({exc}); it was not started again"
        )
    except ExecutorRequestError as exc:
        return ToolOutput.failure(f"{name} on environment `{target.id}`: {exc.message}")
    output = result.output
    if result.timed_out:
        output = f"command timed out after {wait_ms} milliseconds\n".encode() + output
    exit_code = result.exit_code if result.exit_code is not None else 124
    text = format_unified_output(output, 0, time.monotonic() - started, exit_code, None, 10_000)
    details = {
        "output": output.decode("utf-8", "replace"),
        "exit_code": exit_code,
        "environment_id": target.id,
    }
    return ToolOutput(text=text, success=exit_code == 0, details=details)
