"""The one entry point every process-spawning tool calls: confine a command under a policy.

``confine(argv, request)`` returns the argv to start (``PreparedCommand``) or raises
``SandboxUnavailableError`` with a message for the model:

* ``danger-full-access``, or an escalated (user-approved) command: the argv as is.
* any other policy: bubblewrap when it works here (``bwrap.py``), else the Landlock + seccomp shim
  (``landlock.py``) when the kernel supports it, else — only when the user set
  ``sandbox.allow_unsandboxed = true`` — unconfined with a warning; otherwise refused.

``detect_sandbox`` finds the best backend once per process (bwrap, then Landlock, then none).
What does not belong here: which paths are writable (``policy.py``), running the argv
(``exec.py``), approval decisions (``mini_codex.policy``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, assert_never

import msgspec

from mini_codex.errors import SandboxError
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.bwrap import SandboxAvailability, bwrap_argv, detect_bwrap
from mini_codex.sandbox.landlock import detect_landlock, landlock_argv
from mini_codex.sandbox.policy import WritableRoots, writable_roots

__all__ = [
    "PreparedCommand",
    "SandboxRequest",
    "SandboxUnavailableError",
    "bwrap_prefix",
    "confine",
    "detect_sandbox",
    "resolved_roots",
]

Confinement = Literal["bwrap", "landlock", "none"]


class SandboxUnavailableError(SandboxError):
    """A restricted policy cannot be enforced here and running unsandboxed was not allowed."""


class SandboxRequest(msgspec.Struct, frozen=True):
    """Everything needed to confine one command."""

    policy: SandboxPolicy
    cwd: Path
    """The turn's cwd (absolute): the first writable root under ``workspace-write``."""
    backend: SandboxAvailability
    env: Mapping[str, str]
    """The child's environment (its ``TMPDIR`` is writable under ``workspace-write``)."""
    never_writable: tuple[Path, ...] = ()
    """Paths no restricted command may write (``$MINI_CODEX_HOME``)."""
    sandbox_tmp: Path | None = None
    allow_unsandboxed: bool = False
    """``sandbox.allow_unsandboxed``: run unconfined (with a warning) when no backend works."""


class PreparedCommand(msgspec.Struct, frozen=True):
    argv: list[str]
    confinement: Confinement
    note: str | None = None
    command: tuple[str, ...] = ()
    """The command itself (``argv`` without the confinement around it)."""
    """A warning for the model (running unconfined although the policy is restricted)."""


def resolved_roots(request: SandboxRequest) -> WritableRoots:
    """The request's writable roots, symlinks resolved (judged by where they point)."""
    tmp = os.path.realpath(request.sandbox_tmp) if request.sandbox_tmp is not None else None
    return writable_roots(
        request.policy,
        os.path.realpath(request.cwd),
        tmp,
        tmpdir=request.env.get("TMPDIR"),
        never_writable=[str(path) for path in request.never_writable],
    ).resolved(os.path.realpath)


def unsandboxed_note(policy: SandboxPolicy, reason: str) -> str:
    return (
        f"Warning: ran without a sandbox ({reason}); the {policy.mode} policy was not enforced "
        "(sandbox.allow_unsandboxed = true)."
    )


def confine(
    argv: Sequence[str], request: SandboxRequest, workdir: Path, *, escalated: bool = False
) -> PreparedCommand:
    """The argv running ``argv`` in ``workdir`` under ``request`` (see the module docstring)."""
    if escalated or request.policy.mode == "danger-full-access":
        return PreparedCommand(list(argv), "none", command=tuple(argv))
    backend = request.backend
    match backend.kind:
        case "bwrap":
            roots = resolved_roots(request)
            return PreparedCommand(
                bwrap_argv(
                    argv,
                    policy=request.policy,
                    roots=roots,
                    cwd=os.path.realpath(request.cwd),
                    workdir=os.path.realpath(workdir),
                    executable=backend.executable or "bwrap",
                ),
                "bwrap",
                command=tuple(argv),
            )
        case "landlock":
            roots = resolved_roots(request)
            return PreparedCommand(
                landlock_argv(argv, roots=roots, network_access=request.policy.network_access),
                "landlock",
                command=tuple(argv),
            )
        case "none":
            if not request.allow_unsandboxed:
                raise SandboxUnavailableError(
                    f"refused to run: no OS sandbox works on this machine ({backend.reason}), "
                    f"so the {request.policy.mode} policy cannot be enforced. The user can set "
                    "sandbox.allow_unsandboxed = true or choose danger-full-access."
                )
            return PreparedCommand(
                list(argv),
                "none",
                unsandboxed_note(request.policy, backend.reason),
                command=tuple(argv),
            )
        case _:
            assert_never(backend.kind)


def bwrap_prefix(request: SandboxRequest) -> list[str]:
    """The ``bwrap`` command line of a long-lived sandbox for ``request`` (ends with ``--``; the
    command server follows): the per-command confinement with the turn's cwd as its directory."""
    cwd = os.path.realpath(request.cwd)
    return bwrap_argv(
        [],
        policy=request.policy,
        roots=resolved_roots(request),
        cwd=cwd,
        workdir=cwd,
        executable=request.backend.executable or "bwrap",
    )


_DETECTED: dict[tuple[str, str | None], SandboxAvailability] = {}


async def detect_sandbox(
    bwrap_executable: str = "bwrap", *, search_path: str | None = None
) -> SandboxAvailability:
    """The best working backend here: bubblewrap, else Landlock + seccomp, else none (cached)."""
    key = (bwrap_executable, search_path)
    cached = _DETECTED.get(key)
    if cached is not None:
        return cached
    found = await detect_bwrap(bwrap_executable, search_path=search_path)
    if found.kind == "none":
        fallback = await detect_landlock()
        if fallback.kind == "landlock":
            found = SandboxAvailability(
                kind="landlock",
                reason=f"{fallback.reason} (bubblewrap unavailable: {found.reason})",
            )
        else:
            found = SandboxAvailability(kind="none", reason=f"{found.reason}; {fallback.reason}")
    _DETECTED[key] = found
    return found


def clear_sandbox_detection() -> None:
    """Forget cached backend detection (tests)."""
    _DETECTED.clear()
