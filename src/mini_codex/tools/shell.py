"""The ``shell`` tool: run one command string with the user's shell, sandboxed when possible.

Arguments ``{"command": str, "workdir"?: str, "timeout_ms"?: int}``; ``workdir`` is relative to
the turn's cwd (or absolute); the timeout defaults to 10 s and is capped at ``max_timeout_ms``.
The command runs in its own process group (``sandbox/exec.py``): on timeout or cancellation the
whole group is killed, and nothing it started outlives the call.

Safety (``mini_codex.policy`` decides, this tool acts): command rules, the approval policy and
the session's approved prefixes say whether the command runs sandboxed, runs unsandboxed, needs
the user's approval (asked through ``ctx.approvals``) or is rejected. ``sandbox_permissions:
"require_escalated"`` with a ``justification`` asks to run outside the sandbox (``on-request``
only). A sandboxed command runs under ``sandbox.launch.confine`` (bubblewrap, else Landlock +
seccomp, else refused unless ``sandbox.allow_unsandboxed``); when it fails in a way that looks like
a sandbox denial, ``on-failure`` asks to run it again unsandboxed. Every decision is recorded.

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
from typing import Any, Literal, assert_never

from pydantic import BaseModel, ConfigDict, Field

from mini_codex.policy.approval import Ask, Reject, Run, assess_exec, looks_like_sandbox_denial
from mini_codex.protocol.approvals import ExecApprovalRequest, SafetyDecision
from mini_codex.sandbox.bwrap import SandboxAvailability
from mini_codex.sandbox.exec import ExecResult, shell_argv
from mini_codex.sandbox.launch import (
    PreparedCommand,
    SandboxRequest,
    SandboxUnavailableError,
    confine,
    detect_sandbox,
)
from mini_codex.sandbox.pool import SandboxPool
from mini_codex.tools.base import (
    ToolContext,
    ToolOutput,
    ToolSpec,
    parse_arguments,
)
from mini_codex.tools.truncate import DEFAULT_OUTPUT_LIMIT_BYTES, truncate_middle_bytes

__all__ = [
    "SHELL_PARAMETERS",
    "ShellArgs",
    "ShellTool",
    "authorize_exec",
    "confine_for_session",
    "format_exec_output",
    "resolve_workdir",
    "workdir_or_failure",
]

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
        "sandbox_permissions": {
            "type": "string",
            "enum": ["use_default", "require_escalated"],
            "description": (
                "Set to require_escalated to ask the user to run this command outside the "
                "sandbox (only when the sandbox prevents it)."
            ),
        },
        "justification": {
            "type": "string",
            "description": "With require_escalated: one sentence telling the user why.",
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
    sandbox_permissions: Literal["use_default", "require_escalated"] = "use_default"
    justification: str | None = None


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
        long_lived_sandbox: bool = True,
    ) -> None:
        """``availability`` overrides the session's sandbox detection (tests, a known-broken
        host); ``long_lived_sandbox=False`` starts one bubblewrap per command instead of one
        sandbox per session and policy (``sandbox.pool``)."""
        self.default_timeout_ms = default_timeout_ms
        self.max_timeout_ms = max_timeout_ms
        self.max_output_bytes = max_output_bytes
        self.availability = availability
        self.bwrap_executable = bwrap_executable
        self.sandboxes = SandboxPool(long_lived=long_lived_sandbox)
        self._spec = ToolSpec.function("shell", SHELL_PARAMETERS, supports_parallel=True)

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def aclose(self) -> None:
        """End the session's sandboxes (``Session.close``)."""
        await self.sandboxes.aclose()

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments("shell", ShellArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        workdir = workdir_or_failure(ctx, args.workdir)
        if isinstance(workdir, ToolOutput):
            return workdir
        timeout_ms = min(args.timeout_ms or self.default_timeout_ms, self.max_timeout_ms)
        argv = shell_argv(ctx.shell, args.command)
        sandboxed = await authorize_exec(
            ctx,
            argv,
            workdir,
            escalated=args.sandbox_permissions == "require_escalated",
            justification=args.justification,
        )
        if isinstance(sandboxed, ToolOutput):
            return sandboxed
        return await self._execute(argv, ctx, workdir, timeout_ms, sandboxed=sandboxed)

    async def _execute(
        self, argv: list[str], ctx: ToolContext, workdir: Path, timeout_ms: int, *, sandboxed: bool
    ) -> ToolOutput:
        confined = await confine_for_session(
            ctx, argv, workdir, sandboxed=sandboxed, availability=self.availability,
            bwrap_executable=self.bwrap_executable,
        )  # fmt: skip
        if isinstance(confined, ToolOutput):
            return confined
        prepared, request = confined
        result = await self._run(ctx, prepared, request, workdir, timeout_ms)
        if isinstance(result, ToolOutput):
            return result
        note = prepared.note
        if (
            prepared.confinement != "none"
            and not result.timed_out
            and looks_like_sandbox_denial(result.exit_code, result.text())
        ):
            await _record(ctx, argv, "sandbox", "sandbox_denied", f"exit {result.exit_code}")
            if ctx.approval_policy == "on-failure":
                reason = "the command failed in the sandbox; run it again without the sandbox?"
                denied = await _ask(ctx, argv, workdir, reason, True)
                if denied is None:
                    unconfined = PreparedCommand(argv, "none", command=tuple(argv))
                    rerun = await self._run(ctx, unconfined, request, workdir, timeout_ms)
                    if isinstance(rerun, ToolOutput):
                        return rerun
                    result, note = rerun, "Note: re-run without the sandbox after approval."
        text = format_exec_output(
            result, timeout_ms=timeout_ms, max_output_bytes=self.max_output_bytes, note=note
        )
        return ToolOutput(
            text=text,
            success=result.exit_code == 0 and not result.timed_out,
            details={"exit_code": result.exit_code, "output": result.text()},
        )

    async def _run(
        self,
        ctx: ToolContext,
        prepared: PreparedCommand,
        request: SandboxRequest,
        workdir: Path,
        timeout_ms: int,
    ) -> ExecResult | ToolOutput:
        try:
            return await self.sandboxes.run(
                prepared,
                request,
                workdir,
                env=request.env,
                timeout_s=timeout_ms / 1000,
                max_capture_bytes=max(4 * self.max_output_bytes, 256 * 1024),
                on_output=ctx.on_output,
            )
        except OSError as exc:
            return ToolOutput.failure(f"failed to start {prepared.argv[0]}: {exc}")


async def authorize_exec(
    ctx: ToolContext,
    argv: list[str],
    workdir: Path,
    *,
    escalated: bool,
    justification: str | None,
    tool: str = "shell",
) -> bool | ToolOutput:
    """The safety decision for one command (policy, rules, approvals), recorded; asks the user
    when needed. Returns whether to run it sandboxed, or the failure to give the model.

    Shared by every tool that runs commands (``shell``, ``exec_command``)."""
    approvals = ctx.approvals
    assessment = assess_exec(
        argv,
        approval=ctx.approval_policy,
        sandbox=ctx.sandbox.mode,
        escalated=escalated,
        rules=approvals.rules if approvals is not None else None,
        session_prefixes=approvals.session_prefixes() if approvals is not None else (),
    )
    match assessment:
        case Reject(reason=reason, source=source):
            await _record(ctx, argv, source, "reject", reason, tool)
            return ToolOutput.failure(f"Command rejected: {reason}")
        case Ask(reason=reason, escalate=escalate):
            await _record(ctx, argv, assessment.source, "ask", reason, tool)
            answer = await _ask(ctx, argv, workdir, justification or reason, escalate)
            if answer is not None:
                return ToolOutput.failure(answer)
            return not escalate and ctx.sandbox.mode != "danger-full-access"
        case Run(sandboxed=sandboxed, source=source, reason=reason):
            decision = "run" if sandboxed else "run_unsandboxed"
            await _record(ctx, argv, source, decision, reason, tool)
            return sandboxed
        case _:
            assert_never(assessment)


async def _record(
    ctx: ToolContext, argv: list[str], source: str, decision: str, reason: str, tool: str = "shell"
) -> None:
    if ctx.approvals is None:
        return
    await ctx.approvals.record(
        SafetyDecision(
            call_id=ctx.call_id,
            tool=tool,
            source=source,
            decision=decision,
            reason=reason,
            command=argv,
        )
    )


async def _ask(
    ctx: ToolContext, argv: list[str], workdir: Path, reason: str, escalate: bool
) -> str | None:
    """Ask the user; None when approved, else the text telling the model it was not."""
    if ctx.approvals is None:
        return "Command not run: it needs the user's approval and no one can be asked."
    answer = await ctx.approvals.request(
        ExecApprovalRequest(
            call_id=ctx.call_id,
            turn_id=ctx.turn_id,
            command=argv,
            cwd=str(workdir),
            reason=reason,
            escalated=escalate,
        )
    )
    match answer.decision:
        case "approved" | "approved_for_session":
            return None
        case "denied":
            why = f" ({answer.reason})" if answer.reason else ""
            return (
                f"The user denied this command{why}. Do not run it again; find another way or stop."
            )
        case "abort":
            return "The user denied this command and stopped the turn."


def resolve_workdir(cwd: Path, workdir: str | None) -> Path | None:
    """``workdir`` taken relative to ``cwd``; None when it is not an existing directory."""
    path = Path(os.path.normpath(cwd / workdir)) if workdir else cwd
    return path if path.is_dir() else None


def workdir_or_failure(ctx: ToolContext, workdir: str | None) -> Path | ToolOutput:
    """The call's working directory, or the failure the model gets when it is not one."""
    path = resolve_workdir(ctx.cwd, workdir)
    if path is None:
        return ToolOutput.failure(
            f"workdir '{workdir}' is not a directory (relative paths start at {ctx.cwd})"
        )
    return path


async def confine_for_session(
    ctx: ToolContext,
    argv: list[str],
    workdir: Path,
    *,
    sandboxed: bool,
    availability: SandboxAvailability | None,
    bwrap_executable: str,
    tool: str = "shell",
) -> tuple[PreparedCommand, SandboxRequest] | ToolOutput:
    """``argv`` confined by the session's sandbox (``availability`` overrides its detection),
    with the request it was confined for; a recorded rejection when the policy needs a sandbox
    that cannot start here."""
    backend = availability or ctx.sandbox_backend
    if backend is None:
        backend = await detect_sandbox(bwrap_executable, search_path=ctx.env.get("PATH"))
    request = ctx.sandbox_request(backend)
    try:
        return confine(argv, request, workdir, escalated=not sandboxed), request
    except SandboxUnavailableError as exc:
        await _record(ctx, argv, "sandbox", "reject", str(exc), tool)
        return ToolOutput.failure(str(exc))
