"""Bubblewrap (``bwrap``): the command line confining one command; detecting a working bwrap.

The confinement (Linux): the whole filesystem read-only (``--ro-bind / /``), fresh ``/dev``,
``/proc`` and an empty ``/tmp``, the cwd (and workdir) visible again on top of that ``/tmp``, the
writable roots bound read-write, ``<root>/.git`` read-only again, the network unshared unless the
policy allows it, its own PID namespace, and death with the parent. ``-try`` binds are used for
paths that may not exist, so building the command line needs no filesystem access.

Detection runs ``bwrap`` once per executable with the same namespace flags (cached for the
process); when it fails the caller runs unsandboxed and says so (``SandboxAvailability.kind ==
"none"`` with the reason). ``danger-full-access`` never uses bwrap.
What does not belong here: which paths are writable (``policy.py``), running the command
(``exec.py``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import anyio

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.policy import WritableRoots

__all__ = [
    "PROBE_TIMEOUT_S",
    "SandboxAvailability",
    "bwrap_argv",
    "clear_detection_cache",
    "detect_bwrap",
]

PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class SandboxAvailability:
    """Whether commands can be confined on this machine, and why (not)."""

    kind: Literal["bwrap", "none"]
    reason: str
    executable: str | None = None
    """Absolute path of the working ``bwrap`` when ``kind == "bwrap"``."""


def bwrap_argv(
    command: Sequence[str],
    *,
    policy: SandboxPolicy,
    roots: WritableRoots,
    cwd: str,
    workdir: str | None = None,
    executable: str = "bwrap",
) -> list[str]:
    """The full argv running ``command`` inside bubblewrap under ``policy``.

    ``roots`` are the policy's writable roots (``sandbox.policy.writable_roots``), preferably
    realpath-resolved; ``cwd``/``workdir`` are absolute. Pure: nothing is checked on disk.
    """
    if roots.unrestricted:
        raise ValueError("danger-full-access commands are not run under bwrap")
    chdir = workdir or cwd
    argv = [executable, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--tmpfs", "/tmp"]
    # The empty /tmp hides anything below it; the working directories must stay visible.
    for visible in dict.fromkeys((cwd, chdir)):
        argv += ["--ro-bind-try", visible, visible]
    for root in roots.roots:
        argv += ["--bind-try", str(root), str(root)]
    for protected in roots.read_only_subpaths:
        argv += ["--ro-bind-try", str(protected), str(protected)]
    if not policy.network_access:
        argv.append("--unshare-net")
    argv += ["--unshare-pid", "--die-with-parent", "--chdir", chdir, "--"]
    argv += list(command)
    return argv


_CACHE: dict[str, SandboxAvailability] = {}


def clear_detection_cache() -> None:
    """Forget every cached detection result (tests, or after installing bubblewrap)."""
    _CACHE.clear()


async def detect_bwrap(
    executable: str = "bwrap", *, search_path: str | None = None
) -> SandboxAvailability:
    """Find ``executable`` (on ``search_path``) and check it can create our namespaces.

    The result is cached per resolved executable for the life of the process.
    """
    found = shutil.which(executable, path=search_path)
    if found is None:
        return SandboxAvailability(
            kind="none",
            reason=f"{executable!r} not found on PATH (install the bubblewrap package)",
        )
    cached = _CACHE.get(found)
    if cached is not None:
        return cached
    result = await _probe(found)
    _CACHE[found] = result
    return result


async def _probe(executable: str) -> SandboxAvailability:
    probe = [
        executable,
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"),
        *("--unshare-net", "--unshare-pid", "--die-with-parent", "--", "true"),
    ]
    try:
        with anyio.fail_after(PROBE_TIMEOUT_S):
            completed = await anyio.run_process(
                probe, check=False, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
            )
    except TimeoutError:
        return SandboxAvailability(
            kind="none", reason=f"{executable} did not finish a probe in {PROBE_TIMEOUT_S:g} s"
        )
    except OSError as exc:
        return SandboxAvailability(kind="none", reason=f"{executable} cannot run: {exc}")
    if completed.returncode != 0:
        detail = completed.stderr.decode("utf-8", "replace").strip() or "no error output"
        return SandboxAvailability(
            kind="none",
            reason=f"{executable} failed a probe (exit {completed.returncode}): {detail}",
        )
    return SandboxAvailability(
        kind="bwrap", reason="bubblewrap namespaces work", executable=executable
    )
