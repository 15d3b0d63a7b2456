"""Commands on a remote environment (issue 26): ``exec_command`` sessions, ``shell``, and
``write_stdin`` to a remote session.

``run_remote_command``: ``exec_command`` starts the command on the executor (``process/start``
with the executor's own environment, the turn's sandbox policy and a stdin pipe) and, like the
local tool, answers after ``yield_time_ms``: a command still running is kept as a unified exec
session in the same table as the local ones (``UnifiedExecSessions``; the process is an
``environments.remote_process.RemoteProcess``), so the session id the model is given is
unambiguous and ``write_stdin`` with it goes to that environment's executor (``process/write``,
then the output that arrived since). ``shell`` waits for its command (``timeout_ms``, then
``process/terminate``). ``RemoteSessionInput`` wraps ``write_stdin``: an executor that went away
or a closed stdin is an error output and ends that session; the command is never started again.
"""

from __future__ import annotations

import json
import posixpath
import time
from typing import Any

from mini_codex.environments.client import ExecutorGone, ExecutorRequestError
from mini_codex.environments.manager import EnvironmentView
from mini_codex.environments.remote_process import StdinClosed
from mini_codex.sandbox.exec import shell_argv
from mini_codex.tools.base import Tool, ToolContext, ToolOutput, ToolSpec
from mini_codex.tools.unified_exec.tools import (
    UnifiedExecSessions,
    collect_session_output,
    format_unified_output,
)

__all__ = ["RemoteSessionInput", "run_remote_command"]

_DEFAULT_SHELL_TIMEOUT_MS = 120_000


def _gone(name: str, env_id: str, exc: Exception) -> ToolOutput:
    return ToolOutput.failure(
        f"{name}: the executor of environment `{env_id}` went away while the command ran "
        f"({exc}); it was not started again"
    )


async def run_remote_command(
    name: str,
    args: dict[str, Any],
    ctx: ToolContext,
    target: EnvironmentView,
    sessions: UnifiedExecSessions | None,
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
    sandbox = None
    if ctx.sandbox.mode != "danger-full-access":
        sandbox = ctx.sandbox.model_dump(mode="json")
    argv = shell_argv(f"/bin/{target.shell}" if target.shell else "/bin/sh", command)
    assert target.client is not None
    if name == "exec_command" and sessions is not None:
        return await _exec_session(args, ctx, target, sessions, argv, cwd, sandbox)
    wait_ms = args.get("timeout_ms") or _DEFAULT_SHELL_TIMEOUT_MS
    if name == "exec_command":
        wait_ms = args.get("yield_time_ms") or 10_000
    started = time.monotonic()
    try:
        result = await target.client.run_process(
            argv, cwd, sandbox=sandbox, timeout_s=float(wait_ms) / 1000
        )
    except ExecutorGone as exc:
        return _gone(name, target.id, exc)
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


async def _exec_session(
    args: dict[str, Any],
    ctx: ToolContext,
    target: EnvironmentView,
    sessions: UnifiedExecSessions,
    argv: list[str],
    cwd: str,
    sandbox: dict[str, Any] | None,
) -> ToolOutput:
    if sessions.closed:
        return ToolOutput.failure("exec_command: the session is closing")
    if sessions.full():
        return ToolOutput.failure(
            f"exec_command: {sessions.max_sessions} commands are already running "
            "(the limit); wait for one to exit (write_stdin) before starting another"
        )
    yield_ms = args.get("yield_time_ms")
    max_tokens = args.get("max_output_tokens")
    assert target.client is not None
    started = time.monotonic()
    try:
        process = await target.client.start_process(
            argv, cwd, sandbox=sandbox, pipe_stdin=True, tty=args.get("tty") is True
        )
        session_id = sessions.add(process)
        output = await collect_session_output(
            sessions,
            session_id,
            int(yield_ms) if isinstance(yield_ms, (int, float)) else None,
            int(max_tokens) if isinstance(max_tokens, (int, float)) and max_tokens > 0 else None,
            started,
            ctx.on_output,
        )
    except ExecutorGone as exc:
        return _gone("exec_command", target.id, exc)
    except ExecutorRequestError as exc:
        return ToolOutput.failure(f"exec_command on environment `{target.id}`: {exc.message}")
    details = dict(output.details or {})
    details["environment_id"] = target.id
    return ToolOutput(text=output.text, success=output.success, details=details)


class RemoteSessionInput:
    """``write_stdin`` for sessions on any environment (the session id says which)."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    @property
    def spec(self) -> ToolSpec:
        return self.tool.spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        try:
            return await self.tool.call(payload, ctx)
        except StdinClosed as exc:  # the command exited meanwhile: its last output
            args = json.loads(payload)
            polled = await self.call(json.dumps({**args, "chars": ""}), ctx)
            text = f"write_stdin: nothing was written: {exc}\n{polled.text}"
            return ToolOutput(text=text, success=False, details=polled.details)
        except (ExecutorGone, ExecutorRequestError) as exc:
            sessions: UnifiedExecSessions | None = getattr(self.tool, "sessions", None)
            session_id = _session_id(payload)
            if sessions is not None and session_id is not None:
                await sessions.finish(session_id)
            if isinstance(exc, ExecutorGone):
                return ToolOutput.failure(
                    f"write_stdin: the executor of session {session_id} went away ({exc}); "
                    "the session has ended"
                )
            return ToolOutput.failure(f"write_stdin: session {session_id}: {exc.message}")


def _session_id(payload: str) -> int | None:
    try:
        value = json.loads(payload or "{}").get("session_id")
    except (ValueError, AttributeError):
        return None
    return int(value) if isinstance(value, (int, float)) else None
