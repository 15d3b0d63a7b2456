"""The ``shell`` tool: run one command string with the user's shell, sandboxed when possible.

Arguments ``{"command": str, "workdir"?: str, "timeout_ms"?: int}``; ``workdir`` is relative to
the turn's cwd (or absolute); the timeout defaults to 10 s and is capped at ``max_timeout_ms``.
The command runs in its own process group (``sandbox/exec.py``): on timeout or cancellation the
whole group is killed, and nothing it started outlives the call.

Sandbox: ``danger-full-access`` runs directly. Any other policy runs under bubblewrap when a
working ``bwrap`` was detected; otherwise the command runs unsandboxed and the output says so
(degraded mode), because refusing every command would make the agent useless on such machines.

The output text is Codex's ``shell_command`` format::

    Exit code: 0
    Wall time: 0.1 seconds
    Total output lines: 1234           (only when the output was truncated)
    Warning: ran without a sandbox …   (only in degraded mode)
    Output:
    command timed out after 1000 milliseconds   (only on timeout)
    <stdout and stderr, head + tail truncated to max_output_bytes>

Parallel-capable (Codex registers its shell tools with parallel support).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mini_codex.sandbox.bwrap import SandboxAvailability, bwrap_argv, detect_bwrap
from mini_codex.sandbox.exec import ExecResult, run_command, shell_argv
from mini_codex.sandbox.policy import writable_roots
from mini_codex.tools.base import (
    ToolContext,
    ToolOutput,
    ToolSpec,
    load_tool_prompt,
    parse_arguments,
)
from mini_codex.tools.truncate import DEFAULT_OUTPUT_LIMIT_BYTES, truncate_middle_bytes

__all__ = ["SHELL_PARAMETERS", "ShellArgs", "ShellTool", "format_exec_output"]

DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_MAX_TIMEOUT_MS = 30 * 60 * 1000

SHELL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The shell script to run."},
        "workdir": {
            "type": "string",
            "description": "Directory to run in (relative to the workspace); defaults to it.",
        },
        "timeout_ms": {
            "type": "number",
            "description": f"Kill the command after this many ms (default {DEFAULT_TIMEOUT_MS}).",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}


class ShellArgs(BaseModel):
    """The shell tool's arguments (unknown keys are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    command: str = Field(min_length=1)
    workdir: str | None = None
    timeout_ms: int | None = Field(default=None, gt=0)


def format_exec_output(
    result: ExecResult,
    *,
    timeout_ms: int,
    max_output_bytes: int,
    note: str | None = None,
) -> str:
    """The model-visible text of one command (see the module docstring)."""
    body = truncate_middle_bytes(
        result.output, max_output_bytes, already_omitted=result.omitted_bytes
    )
    if result.timed_out:
        body = f"command timed out after {timeout_ms} milliseconds\n{body}"
    sections = [f"Exit code: {result.exit_code}", f"Wall time: {result.wall_time_s:.1f} seconds"]
    if result.omitted_bytes or len(result.output) > max_output_bytes:
        sections.append(f"Total output lines: {result.total_lines}")
    if note:
        sections.append(note)
    sections += ["Output:", body]
    return "\n".join(sections)


class ShellTool:
    """Runs ``command`` with ``ctx.shell -c`` in ``ctx.cwd`` (or ``workdir``)."""

    def __init__(
        self,
        *,
        default_timeout_ms: int = DEFAULT_TIMEOUT_MS,
        max_timeout_ms: int = DEFAULT_MAX_TIMEOUT_MS,
        max_output_bytes: int = DEFAULT_OUTPUT_LIMIT_BYTES,
        availability: SandboxAvailability | None = None,
        bwrap_executable: str = "bwrap",
    ) -> None:
        """``availability`` overrides bubblewrap detection (tests, or a known-broken host)."""
        self.default_timeout_ms = default_timeout_ms
        self.max_timeout_ms = max_timeout_ms
        self.max_output_bytes = max_output_bytes
        self.availability = availability
        self.bwrap_executable = bwrap_executable
        self._spec = ToolSpec(
            name="shell",
            description=load_tool_prompt("shell.md"),
            kind="function",
            parameters=SHELL_PARAMETERS,
            supports_parallel=True,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments("shell", ShellArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        workdir = _workdir(ctx.cwd, args.workdir)
        if workdir is None:
            return ToolOutput.failure(
                f"workdir '{args.workdir}' is not a directory (relative paths start at {ctx.cwd})"
            )
        timeout_ms = min(args.timeout_ms or self.default_timeout_ms, self.max_timeout_ms)
        argv, note = await self._argv(args.command, ctx, workdir)
        try:
            result = await run_command(
                argv,
                cwd=workdir,
                env=ctx.env,
                timeout_s=timeout_ms / 1000,
                max_capture_bytes=max(4 * self.max_output_bytes, 256 * 1024),
            )
        except OSError as exc:
            return ToolOutput.failure(f"failed to start {argv[0]}: {exc}")
        text = format_exec_output(
            result, timeout_ms=timeout_ms, max_output_bytes=self.max_output_bytes, note=note
        )
        return ToolOutput(
            text=text,
            success=result.exit_code == 0 and not result.timed_out,
            details={"exit_code": result.exit_code, "output": result.text()},
        )

    async def _argv(
        self, command: str, ctx: ToolContext, workdir: Path
    ) -> tuple[list[str], str | None]:
        argv = shell_argv(ctx.shell, command)
        if ctx.sandbox.mode == "danger-full-access":
            return argv, None
        availability = self.availability or await detect_bwrap(
            self.bwrap_executable, search_path=ctx.env.get("PATH")
        )
        if availability.kind == "none" or availability.executable is None:
            return argv, (
                f"Warning: ran without a sandbox ({availability.reason}); "
                f"the {ctx.sandbox.mode} policy was not enforced."
            )
        return _bwrap_command(argv, ctx, workdir, availability.executable), None


def _workdir(cwd: Path, workdir: str | None) -> Path | None:
    """``workdir`` taken relative to ``cwd``; None when it is not an existing directory."""
    path = Path(os.path.normpath(cwd / workdir)) if workdir else cwd
    return path if path.is_dir() else None


def _bwrap_command(argv: list[str], ctx: ToolContext, workdir: Path, executable: str) -> list[str]:
    cwd = os.path.realpath(ctx.cwd)
    tmp = os.path.realpath(ctx.sandbox_tmp) if ctx.sandbox_tmp is not None else None
    return bwrap_argv(
        argv,
        policy=ctx.sandbox,
        roots=writable_roots(ctx.sandbox, cwd, tmp).resolved(os.path.realpath),
        cwd=cwd,
        workdir=os.path.realpath(workdir),
        executable=executable,
    )
