"""Sandboxing commands: pure policy decisions, the confinement backends, and running a command.

``policy`` is pure (which paths a policy lets a command write); ``launch.confine`` is the one
entry point a process-spawning tool calls (bubblewrap from ``bwrap``, else the Landlock + seccomp
shim from ``landlock``, else refused or — when allowed — unconfined); ``exec`` runs one command in
its own process group with a timeout and kills the whole group on timeout or cancellation;
``pool`` runs a confined command in the session's long-lived sandbox (``server`` on the agent's
side, ``server_main`` inside), so a command costs a fork + exec instead of a new sandbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex._lazy import lazy_exports

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "SandboxAvailability": "mini_codex.sandbox.bwrap",
        "bwrap_argv": "mini_codex.sandbox.bwrap",
        "clear_detection_cache": "mini_codex.sandbox.bwrap",
        "detect_bwrap": "mini_codex.sandbox.bwrap",
        "TIMEOUT_EXIT_CODE": "mini_codex.sandbox.exec",
        "ExecResult": "mini_codex.sandbox.exec",
        "run_command": "mini_codex.sandbox.exec",
        "shell_argv": "mini_codex.sandbox.exec",
        "PreparedCommand": "mini_codex.sandbox.launch",
        "SandboxRequest": "mini_codex.sandbox.launch",
        "SandboxUnavailableError": "mini_codex.sandbox.launch",
        "confine": "mini_codex.sandbox.launch",
        "detect_sandbox": "mini_codex.sandbox.launch",
        "WritableRoots": "mini_codex.sandbox.policy",
        "is_path_writable": "mini_codex.sandbox.policy",
        "writable_roots": "mini_codex.sandbox.policy",
    },
)
