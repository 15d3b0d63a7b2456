"""Sandboxing commands: pure policy decisions, the bubblewrap command line, and running a command.

``policy`` is pure (which paths a policy lets a command write); ``bwrap`` builds the confinement
and detects whether bubblewrap works here; ``exec`` runs one command in its own process group with
a timeout and kills the whole group on timeout or cancellation.
"""

from mini_codex.sandbox.bwrap import (
    SandboxAvailability,
    bwrap_argv,
    clear_detection_cache,
    detect_bwrap,
)
from mini_codex.sandbox.exec import TIMEOUT_EXIT_CODE, ExecResult, run_command, shell_argv
from mini_codex.sandbox.policy import WritableRoots, is_path_writable, writable_roots

__all__ = [
    "TIMEOUT_EXIT_CODE",
    "ExecResult",
    "SandboxAvailability",
    "WritableRoots",
    "bwrap_argv",
    "clear_detection_cache",
    "detect_bwrap",
    "is_path_writable",
    "run_command",
    "shell_argv",
    "writable_roots",
]
