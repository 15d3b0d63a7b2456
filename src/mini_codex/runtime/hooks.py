"""Hooks: ``notify`` and the command hooks of ``[hooks]`` (Codex's, shaped like Claude Code's).

* ``notify = ["cmd", "arg"]``: when a turn completes, ``cmd arg <json>`` runs in the background
  with Codex's payload ``{"type": "agent-turn-complete", "thread-id", "turn-id", "cwd",
  "input-messages", "last-assistant-message"}`` as its last argument.
* ``[[hooks.EVENT]]`` groups (``SessionStart``, ``PreToolUse``, ``PostToolUse``, ``Stop``) hold
  ``matcher`` (a tool-name regex; empty or ``*``: all) and ``hooks = [{command, timeout}]``. Each
  command runs with the user's shell in the session cwd, the event's JSON on stdin
  (``hook_event_name``, ``session_id``, ``cwd``, plus ``tool_name`` / ``tool_input`` /
  ``tool_use_id`` / ``tool_response`` or ``turn_id`` / ``last_assistant_message``).
* A ``PreToolUse`` hook denies the call with exit code 2 (the reason on stderr) or with stdout
  JSON ``{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": R}}``
  or ``{"decision": "block", "reason": R}``; the model is then told
  ``Tool call blocked by PreToolUse hook: R`` and the tool does not run.
* Every hook has a timeout (then its process group is killed). A hook that fails, times out or
  cannot start is reported as a warning; it is never fatal and never denies.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import msgspec
import orjson
from anyio.abc import TaskGroup
from msgspec.structs import replace

from mini_codex.config import HookMatcher, HooksConfig
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

__all__ = ["HookResult", "HookedTool", "Hooks", "run_hook_command"]

BLOCKED = "Tool call blocked by PreToolUse hook: "
_MAX_OUTPUT = 64 * 1024


class HookResult(msgspec.Struct, frozen=True):
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str | None = None

    def problem(self, timeout_s: float) -> str | None:
        if self.error is not None:
            return self.error
        if self.timed_out:
            return f"timed out after {timeout_s:g}s"
        if self.exit_code not in (0, 2):
            detail = self.stderr.strip().splitlines()[-1:] or [""]
            return f"exit code {self.exit_code}" + (f": {detail[0]}" if detail[0] else "")
        return None


async def run_hook_command(
    argv: Sequence[str],
    *,
    stdin: bytes,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
) -> HookResult:
    """Run ``argv`` in its own process group with ``stdin``; kill the group on timeout."""
    try:
        process = await anyio.open_process(
            list(argv), cwd=cwd, env=dict(env), start_new_session=True
        )
    except OSError as exc:
        return HookResult(None, "", "", error=f"cannot start: {exc.strerror or exc}")
    out = bytearray()
    err = bytearray()

    async def pump(stream: Any, into: bytearray) -> None:
        async for chunk in stream:
            if len(into) < _MAX_OUTPUT:
                into += chunk[: _MAX_OUTPUT - len(into)]

    timed_out = False
    async with process:
        with anyio.move_on_after(timeout_s) as scope:
            async with anyio.create_task_group() as group:
                assert process.stdout is not None
                assert process.stderr is not None
                group.start_soon(pump, process.stdout, out)
                group.start_soon(pump, process.stderr, err)
                if process.stdin is not None:
                    try:
                        await process.stdin.send(stdin)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass
                    await process.stdin.aclose()
                await process.wait()
        if scope.cancelled_caught:
            timed_out = True
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            with anyio.CancelScope(shield=True):
                await process.wait()
    return HookResult(
        process.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        timed_out=timed_out,
    )


def _matches(group: HookMatcher, tool: str | None) -> bool:
    if tool is None or not group.matcher or group.matcher == "*":
        return True
    try:
        return re.fullmatch(group.matcher, tool) is not None
    except re.error:
        return False


def _deny_reason(result: HookResult) -> str | None:
    if result.timed_out or result.error is not None:
        return None
    if result.exit_code == 2:
        return result.stderr.strip() or "denied by a hook"
    if result.exit_code != 0:
        return None
    try:
        decision = orjson.loads(result.stdout) if result.stdout.strip() else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(decision, dict):
        return None
    specific = decision.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        return str(specific.get("permissionDecisionReason") or "denied by a hook")
    if decision.get("decision") == "block":
        return str(decision.get("reason") or "denied by a hook")
    return None


class Hooks:
    """The session's hooks; every method is safe to call (failures become warnings)."""

    def __init__(
        self,
        config: HooksConfig,
        notify: Sequence[str] | None,
        *,
        cwd: Path,
        env: Mapping[str, str],
        shell: str,
        session_id: Callable[[], str],
        on_warning: Callable[[str], None],
    ) -> None:
        self.config = config
        self.notify_argv = tuple(notify or ())
        self.cwd = cwd
        self.env = env
        self.shell = shell
        self._session_id = session_id
        self._warn = on_warning

    @property
    def wraps_tools(self) -> bool:
        return bool(self.config.PreToolUse or self.config.PostToolUse)

    async def _run(self, event: str, payload: dict[str, Any], tool: str | None = None) -> list[str]:
        """Run the event's matching hooks in order; the deny reasons they gave."""
        groups: tuple[HookMatcher, ...] = getattr(self.config, event)
        common = {"hook_event_name": event, "session_id": self._session_id(), "cwd": str(self.cwd)}
        body = orjson.dumps({**common, **payload})
        reasons: list[str] = []
        for group in groups:
            if not _matches(group, tool):
                continue
            for hook in group.hooks:
                result = await run_hook_command(
                    [self.shell, "-c", hook.command],
                    stdin=body,
                    cwd=self.cwd,
                    env=self.env,
                    timeout_s=hook.timeout,
                )
                problem = result.problem(hook.timeout)
                if problem is not None:
                    self._warn(f"{event} hook `{hook.command}` failed: {problem}")
                    continue
                reason = _deny_reason(result)
                if reason is not None:
                    reasons.append(reason)
        return reasons

    async def session_start(self, source: str) -> None:
        if self.config.SessionStart:
            await self._run("SessionStart", {"source": source})

    async def pre_tool_use(self, name: str, tool_input: Any, call_id: str) -> str | None:
        payload = {"tool_name": name, "tool_input": tool_input, "tool_use_id": call_id}
        reasons = await self._run("PreToolUse", payload, tool=name)
        return "; ".join(reasons) if reasons else None

    async def post_tool_use(
        self, name: str, tool_input: Any, call_id: str, output: ToolOutput
    ) -> None:
        response = {"output": output.text, "success": output.success}
        payload = {"tool_name": name, "tool_input": tool_input, "tool_use_id": call_id,
                   "tool_response": response}  # fmt: skip
        await self._run("PostToolUse", payload, tool=name)

    async def turn_ended(
        self,
        turn_id: str,
        input_messages: list[str],
        last_message: str | None,
        task_group: TaskGroup,
    ) -> None:
        """Stop hooks (awaited), then ``notify`` (in the background, also bounded)."""
        if self.config.Stop:
            payload = {"turn_id": turn_id, "last_assistant_message": last_message}
            await self._run("Stop", payload)
        if self.notify_argv:
            notice = {
                "type": "agent-turn-complete",
                "thread-id": self._session_id(),
                "turn-id": turn_id,
                "cwd": str(self.cwd),
                "input-messages": input_messages,
                "last-assistant-message": last_message,
            }
            task_group.start_soon(self._notify, orjson.dumps(notice).decode())

    async def _notify(self, payload: str) -> None:
        result = await run_hook_command(
            [*self.notify_argv, payload], stdin=b"", cwd=self.cwd, env=self.env, timeout_s=60.0
        )
        problem = result.problem(60.0) or (
            f"exit code {result.exit_code}" if result.exit_code == 2 else None
        )
        if problem is not None:
            self._warn(f"notify `{self.notify_argv[0]}` failed: {problem}")

    def wrap(self, registered: RegisteredTool) -> RegisteredTool:
        return replace(registered, tool=HookedTool(registered.tool, self))


def _tool_input(spec: ToolSpec, payload: str) -> Any:
    if spec.kind == "custom":
        return {"input": payload}
    try:
        return orjson.loads(payload) if payload.strip() else {}
    except orjson.JSONDecodeError:
        return payload


class HookedTool:
    """A tool whose calls pass through the ``PreToolUse`` / ``PostToolUse`` hooks."""

    def __init__(self, tool: Any, hooks: Hooks) -> None:
        self.tool = tool
        self.hooks = hooks

    @property
    def spec(self) -> ToolSpec:
        spec: ToolSpec = self.tool.spec
        return spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        name = self.spec.name
        tool_input = _tool_input(self.spec, payload)
        reason = await self.hooks.pre_tool_use(name, tool_input, ctx.call_id)
        if reason is not None:
            return ToolOutput.failure(BLOCKED + reason)
        output: ToolOutput = await self.tool.call(payload, ctx)
        await self.hooks.post_tool_use(name, tool_input, ctx.call_id, output)
        return output
