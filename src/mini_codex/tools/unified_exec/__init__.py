"""Unified exec: `exec_command` runs a command on a PTY, `write_stdin` drives it (Codex 0.169)."""

from mini_codex.tools.unified_exec.process import PtyProcess
from mini_codex.tools.unified_exec.tools import (
    DEFAULT_MAX_SESSIONS,
    ExecCommandTool,
    UnifiedExecSessions,
    WriteStdinTool,
    unified_exec_tools,
)

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "ExecCommandTool",
    "PtyProcess",
    "UnifiedExecSessions",
    "WriteStdinTool",
    "unified_exec_tools",
]
