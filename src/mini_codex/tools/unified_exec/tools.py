"""The ``exec_command`` and ``write_stdin`` tools and the live sessions they share.

``exec_command {cmd, workdir?, yield_time_ms?, max_output_tokens?, tty?, sandbox_permissions?,
justification?}`` decides safety exactly like ``shell`` (``tools.shell.authorize_exec``), starts
the command under ``sandbox.launch.confine`` on a PTY and returns after ``yield_time_ms`` (or when
it exits). A command still running is kept as a session (at most ``max_sessions``);
``write_stdin {session_id, chars, yield_time_ms?, max_output_tokens?}`` types into it and returns
what it printed since. ``tty=false`` (the default) turns the terminal's echo off. ``aclose()``
kills every live session's process group (called when the agent session closes).

The output text is Codex 0.169's::

    Chunk ID: 1f0c2a
    Wall time: 0.2500 seconds
    Process exited with code 0        (or: Process running with session ID 3)
    Original token count: 12
    Output:
    <output, middle-truncated to max_output_tokens>
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from mini_codex.sandbox.bwrap import SandboxAvailability
from mini_codex.sandbox.exec import shell_argv
from mini_codex.sandbox.pool import SandboxPool
from mini_codex.tools.base import (
    ToolContext,
    ToolOutput,
    ToolSpec,
    parse_arguments,
)
from mini_codex.tools.shell import authorize_exec, confine_for_session, workdir_or_failure
from mini_codex.tools.truncate import truncate_middle_bytes
from mini_codex.tools.unified_exec.process import PtyProcess, SessionProcess

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "ExecCommandTool",
    "SessionProcess",
    "UnifiedExecSessions",
    "WriteStdinTool",
    "collect_session_output",
    "unified_exec_tools",
]

DEFAULT_MAX_SESSIONS = 8
EXEC_YIELD_MS = 10_000
WRITE_YIELD_MS = 250
MAX_YIELD_MS = 30_000
DEFAULT_MAX_OUTPUT_TOKENS = 10_000
_BYTES_PER_TOKEN = 4
_MIN_CAPTURE_BYTES = 256 * 1024

_PERMISSIONS: dict[str, Any] = {
    "sandbox_permissions": {
        "type": "string",
        "enum": ["use_default", "require_escalated"],
        "description": "require_escalated asks the user to run outside the sandbox.",
    },
    "justification": {"type": "string", "description": "With require_escalated: why."},
}

_OUTPUT_WAIT: dict[str, Any] = {
    "yield_time_ms": {"type": "number", "description": "How long to wait for output."},
    "max_output_tokens": {"type": "number", "description": "Maximum tokens to return."},
}
"""How a call waits for and bounds the output it returns (both tools)."""

EXEC_COMMAND_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cmd": {"type": "string", "description": "Shell command to execute."},
        "workdir": {"type": "string", "description": "Working directory (default: the turn's)."},
        "tty": {"type": "boolean", "description": "Echo typed input like a terminal."},
        **_OUTPUT_WAIT,
        **_PERMISSIONS,
    },
    "required": ["cmd"],
    "additionalProperties": False,
}

WRITE_STDIN_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "session_id": {"type": "number", "description": "Identifier of the running session."},
        "chars": {"type": "string", "description": "Bytes to write (may be empty to poll)."},
        **_OUTPUT_WAIT,
    },
    "required": ["session_id"],
    "additionalProperties": False,
}


class ExecCommandArgs(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    cmd: str = Field(min_length=1)
    workdir: str | None = None
    tty: bool = False
    yield_time_ms: int | None = Field(default=None, ge=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    sandbox_permissions: Literal["use_default", "require_escalated"] = "use_default"
    justification: str | None = None


class WriteStdinArgs(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    session_id: int
    chars: str = ""
    yield_time_ms: int | None = Field(default=None, ge=0)
    max_output_tokens: int | None = Field(default=None, gt=0)


class _Live:
    def __init__(self, process: SessionProcess) -> None:
        self.process = process
        self.lock = anyio.Lock()


class UnifiedExecSessions:
    """The live PTY sessions of one agent session (at most ``max_sessions``)."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self.max_sessions = max_sessions
        self._live: dict[int, _Live] = {}
        self._next_id = 1
        self._closed = False

    def __len__(self) -> int:
        return len(self._live)

    def pids(self) -> list[int]:
        """Process-group ids of the live sessions started here (not in a bubblewrap sandbox)."""
        return [pid for live in self._live.values() if (pid := live.process.pid) is not None]

    def full(self) -> bool:
        return len(self._live) >= self.max_sessions

    def add(self, process: SessionProcess) -> int:
        session_id = self._next_id
        self._next_id += 1
        self._live[session_id] = _Live(process)
        return session_id

    def get(self, session_id: int) -> _Live | None:
        return self._live.get(session_id)

    async def finish(self, session_id: int) -> None:
        live = self._live.pop(session_id, None)
        if live is not None:
            await live.process.kill()

    async def aclose(self) -> None:
        """Kill every live session (its whole process group)."""
        self._closed = True
        for session_id in list(self._live):
            await self.finish(session_id)

    @property
    def closed(self) -> bool:
        return self._closed


def _format(
    data: bytes,
    omitted: int,
    wall_s: float,
    exit_code: int | None,
    session_id: int | None,
    max_tokens: int,
) -> str:
    status = (
        f"Process exited with code {exit_code}"
        if exit_code is not None
        else f"Process running with session ID {session_id}"
    )
    body = truncate_middle_bytes(data, max_tokens * _BYTES_PER_TOKEN, already_omitted=omitted)
    total = len(data) + omitted
    return "\n".join(
        [
            f"Chunk ID: {secrets.token_hex(3)}",
            f"Wall time: {wall_s:.4f} seconds",
            status,
            f"Original token count: {(total + _BYTES_PER_TOKEN - 1) // _BYTES_PER_TOKEN}",
            "Output:",
            body,
        ]
    )


format_unified_output = _format
"""The model-visible text of one command (Codex 0.169's shape; see the module docstring)."""


async def collect_session_output(
    sessions: UnifiedExecSessions,
    session_id: int,
    yield_ms: int | None,
    max_output_tokens: int | None,
    started: float,
    on_output: Callable[[bytes], None] | None,
) -> ToolOutput:
    """``exec_command``'s answer for a session just added (a remote command's too): its output
    for ``yield_ms``; the session is kept when the command still runs."""
    live = sessions.get(session_id)
    assert live is not None
    max_tokens = max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
    yield_ms = EXEC_YIELD_MS if yield_ms is None else yield_ms
    try:
        async with live.lock:
            return await _collect(
                sessions, session_id, live, yield_ms, max_tokens, started, on_output
            )
    except BaseException:
        with anyio.CancelScope(shield=True):
            await sessions.finish(session_id)
        raise


async def _collect(
    sessions: UnifiedExecSessions,
    session_id: int,
    live: _Live,
    yield_ms: int,
    max_tokens: int,
    started: float,
    on_output: Callable[[bytes], None] | None,
) -> ToolOutput:
    process = live.process
    data, omitted = await process.read_for(
        min(yield_ms, MAX_YIELD_MS) / 1000,
        limit=max(4 * max_tokens * _BYTES_PER_TOKEN, _MIN_CAPTURE_BYTES),
        on_output=on_output,
    )
    exit_code = process.exit_code if process.finished else None
    if exit_code is not None:
        await sessions.finish(session_id)
    text = _format(data, omitted, time.monotonic() - started, exit_code, session_id, max_tokens)
    details: dict[str, Any] = {"output": data.decode("utf-8", "replace")}
    if exit_code is not None:
        details["exit_code"] = exit_code
    else:
        details["session_id"] = session_id
    return ToolOutput(text=text, success=exit_code in (None, 0), details=details)


class ExecCommandTool:
    """Starts ``cmd`` on a PTY (see the module docstring)."""

    def __init__(
        self,
        sessions: UnifiedExecSessions,
        *,
        availability: SandboxAvailability | None = None,
        bwrap_executable: str = "bwrap",
        long_lived_sandbox: bool = True,
    ) -> None:
        self.sessions = sessions
        self.availability = availability
        self.bwrap_executable = bwrap_executable
        self.sandboxes = SandboxPool(long_lived=long_lived_sandbox)
        """The session's long-lived sandbox for sandboxed commands (``sandbox.pool``)."""
        self._spec = ToolSpec.function(
            "exec_command", EXEC_COMMAND_PARAMETERS, supports_parallel=True
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def aclose(self) -> None:
        await self.sessions.aclose()
        await self.sandboxes.aclose()

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments("exec_command", ExecCommandArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        workdir = workdir_or_failure(ctx, args.workdir)
        if isinstance(workdir, ToolOutput):
            return workdir
        if self.sessions.closed:
            return ToolOutput.failure("exec_command: the session is closing")
        if self.sessions.full():
            return ToolOutput.failure(
                f"exec_command: {self.sessions.max_sessions} commands are already running "
                "(the limit); wait for one to exit (write_stdin) before starting another"
            )
        argv = shell_argv(ctx.shell, args.cmd)
        sandboxed = await authorize_exec(
            ctx,
            argv,
            workdir,
            escalated=args.sandbox_permissions == "require_escalated",
            justification=args.justification,
            tool="exec_command",
        )
        if isinstance(sandboxed, ToolOutput):
            return sandboxed
        confined = await confine_for_session(
            ctx, argv, workdir, sandboxed=sandboxed, availability=self.availability,
            bwrap_executable=self.bwrap_executable, tool="exec_command",
        )  # fmt: skip
        if isinstance(confined, ToolOutput):
            return confined
        prepared, request = confined
        if self.sessions.full():  # another call started one while we were asking
            return ToolOutput.failure(
                f"exec_command: {self.sessions.max_sessions} commands are already running"
            )
        started = time.monotonic()
        try:
            process = await PtyProcess.start(
                prepared.argv,
                cwd=workdir,
                env=ctx.env,
                echo=args.tty,
                sandbox=(self.sandboxes, prepared, request),
            )
        except OSError as exc:
            return ToolOutput.failure(f"failed to start {prepared.argv[0]}: {exc}")
        session_id = self.sessions.add(process)
        return await collect_session_output(
            self.sessions,
            session_id,
            args.yield_time_ms,
            args.max_output_tokens,
            started,
            ctx.on_output,
        )


class WriteStdinTool:
    """Writes to a live ``exec_command`` session and returns its new output."""

    def __init__(self, sessions: UnifiedExecSessions) -> None:
        self.sessions = sessions
        self._spec = ToolSpec.function("write_stdin", WRITE_STDIN_PARAMETERS)

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments("write_stdin", WriteStdinArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        live = self.sessions.get(args.session_id)
        if live is None:
            return ToolOutput.failure(
                f"write_stdin: no running session {args.session_id} (it exited or never existed)"
            )
        started = time.monotonic()
        max_tokens = args.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        yield_ms = WRITE_YIELD_MS if args.yield_time_ms is None else args.yield_time_ms
        async with live.lock:
            if args.chars:
                await live.process.write(args.chars)
            return await _collect(
                self.sessions, args.session_id, live, yield_ms, max_tokens, started, ctx.on_output
            )


def unified_exec_tools(
    max_sessions: int = DEFAULT_MAX_SESSIONS, *, availability: SandboxAvailability | None = None
) -> tuple[ExecCommandTool, WriteStdinTool]:
    """The two tools, sharing one set of live sessions."""
    sessions = UnifiedExecSessions(max_sessions)
    return ExecCommandTool(sessions, availability=availability), WriteStdinTool(sessions)
