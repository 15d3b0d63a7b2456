"""Sandboxing commands: pure policy decisions, the confinement backends, and running a command.

``policy`` is pure (which paths a policy lets a command write); ``launch.confine`` is the one
entry point a process-spawning tool calls (bubblewrap from ``bwrap``, else the Landlock + seccomp
shim from ``landlock``, else refused or — when allowed — unconfined); ``exec`` runs one command in
its own process group with a timeout and kills the whole group on timeout or cancellation;
``pool`` runs a confined command in the session's long-lived sandbox (``server`` on the agent's
side, ``server_main`` inside), so a command costs a fork + exec instead of a new sandbox.
"""

from mini_codex.sandbox.bwrap import (
    SandboxAvailability,
    bwrap_argv,
    clear_detection_cache,
    detect_bwrap,
)
from mini_codex.sandbox.exec import TIMEOUT_EXIT_CODE, ExecResult, run_command, shell_argv
from mini_codex.sandbox.launch import (
    PreparedCommand,
    SandboxRequest,
    SandboxUnavailableError,
    confine,
    detect_sandbox,
)
from mini_codex.sandbox.policy import WritableRoots, is_path_writable, writable_roots

__all__ = [
    "TIMEOUT_EXIT_CODE",
    "ExecResult",
    "PreparedCommand",
    "SandboxAvailability",
    "SandboxRequest",
    "SandboxUnavailableError",
    "WritableRoots",
    "bwrap_argv",
    "clear_detection_cache",
    "confine",
    "detect_bwrap",
    "detect_sandbox",
    "is_path_writable",
    "run_command",
    "shell_argv",
    "writable_roots",
]
