"""The ``apply_patch`` tool: Codex's patch envelope, applied all or nothing inside the sandbox.

Two forms with the same name; the router picks one per provider: a freeform custom tool whose
input is constrained by a Lark grammar (``ApplyPatchTool(freeform=True)``) and a function tool
taking ``{"input": "<patch>"}``. Both run ``parser.parse_patch`` then ``apply.apply_patch`` (in a
worker thread, so a cancelled call still finishes or rolls back its writes).

Safety: ``policy.assess_patch`` decides. Under ``untrusted`` every patch is shown to the user
first (``apply_patch_approval_request``); a patch the sandbox policy refuses (outside the writable
roots, a protected directory) is rejected under ``never`` and otherwise asked for — approved, it is
applied without the sandbox's path limits. Every decision is recorded through ``ctx.approvals``.
"""

from __future__ import annotations

import functools
from typing import Any, assert_never

import anyio
from pydantic import BaseModel, ConfigDict

from mini_codex.policy.approval import Ask, Reject, Run, assess_patch
from mini_codex.protocol.approvals import ApplyPatchApprovalRequest, SafetyDecision
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.tools.apply_patch.apply import (
    ApplyResult,
    FileChange,
    PatchApplyError,
    PatchOutsideSandboxError,
    apply_patch,
    check_patch,
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
    "PatchOutsideSandboxError",
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
        first = assess_patch(
            approval=ctx.approval_policy, sandbox=ctx.sandbox.mode, within_roots=True
        )
        if isinstance(first, Ask) and not await self._outside(patch, ctx):
            # A patch outside the roots is asked about once, below, as the escalation it is.
            refusal = await _ask(ctx, patch, first.reason)
            if refusal is not None:
                return ToolOutput.failure(refusal)
        try:
            result = await self._apply(patch, ctx, ctx.sandbox)
            if isinstance(first, Run):
                await _record(ctx, "policy", "run", first.reason)
        except PatchOutsideSandboxError as exc:
            second = assess_patch(
                approval=ctx.approval_policy, sandbox=ctx.sandbox.mode, within_roots=False
            )
            if isinstance(second, Reject):
                await _record(ctx, "policy", "reject", f"{exc}; {second.reason}")
                return ToolOutput.failure(f"apply_patch failed: {exc}\nNo files were changed.")
            refusal = await _ask(ctx, patch, f"{second.reason}: {exc}")
            if refusal is not None:
                return ToolOutput.failure(refusal)
            try:
                result = await self._apply(patch, ctx, SandboxPolicy.danger_full_access())
            except PatchApplyError as again:
                return _failed(again)
        except PatchApplyError as exc:
            return _failed(exc)
        return ToolOutput(text=result.summary(), success=True)

    @staticmethod
    async def _outside(patch: Patch, ctx: ToolContext) -> bool:
        """Whether applying ``patch`` under the sandbox policy would be refused for its paths."""
        check = functools.partial(
            check_patch,
            patch,
            cwd=ctx.cwd,
            policy=ctx.sandbox,
            sandbox_tmp=ctx.sandbox_tmp,
            tmpdir=ctx.env.get("TMPDIR"),
            never_writable=ctx.never_writable,
        )
        try:
            await anyio.to_thread.run_sync(check)
        except PatchOutsideSandboxError:
            return True
        except PatchApplyError:
            return False  # it fails for another reason: asked as before, then reported
        return False

    @staticmethod
    async def _apply(patch: Patch, ctx: ToolContext, policy: SandboxPolicy) -> ApplyResult:
        run = functools.partial(
            apply_patch,
            patch,
            cwd=ctx.cwd,
            policy=policy,
            sandbox_tmp=ctx.sandbox_tmp,
            tmpdir=ctx.env.get("TMPDIR"),
            never_writable=ctx.never_writable,
        )
        return await anyio.to_thread.run_sync(run)


def _failed(exc: PatchApplyError) -> ToolOutput:
    tail = "\nNo files were changed." if exc.changed_nothing else ""
    return ToolOutput.failure(f"apply_patch failed: {exc}{tail}")


def _changes(patch: Patch) -> dict[str, str]:
    changes: dict[str, str] = {}
    for hunk in patch.hunks:
        match hunk:
            case AddFile(path=path):
                changes[path] = "add"
            case DeleteFile(path=path):
                changes[path] = "delete"
            case UpdateFile(path=path):
                changes[path] = "update"
            case _:
                assert_never(hunk)
    return changes


async def _record(ctx: ToolContext, source: str, decision: str, reason: str) -> None:
    if ctx.approvals is not None:
        await ctx.approvals.record(
            SafetyDecision(
                call_id=ctx.call_id,
                tool="apply_patch",
                source=source,
                decision=decision,
                reason=reason,
            )
        )


async def _ask(ctx: ToolContext, patch: Patch, reason: str) -> str | None:
    """Ask the user about ``patch``; None when approved, else the text for the model."""
    await _record(ctx, "policy", "ask", reason)
    if ctx.approvals is None:
        return "apply_patch not applied: it needs the user's approval and no one can be asked."
    answer = await ctx.approvals.request(
        ApplyPatchApprovalRequest(
            call_id=ctx.call_id, turn_id=ctx.turn_id, changes=_changes(patch), reason=reason
        )
    )
    match answer.decision:
        case "approved" | "approved_for_session":
            return None
        case "denied":
            why = f" ({answer.reason})" if answer.reason else ""
            return f"The user denied this patch{why}. No files were changed."
        case "abort":
            return "The user denied this patch and stopped the turn. No files were changed."
