"""Bubblewrap (``bwrap``): the command line confining one command; detecting a working bwrap.

The confinement (Linux):

* the whole filesystem read-only (``--ro-bind / /``), fresh ``/dev`` and ``/proc``;
* the writable roots bound read-write (for ``workspace-write`` that includes the real ``/tmp`` and
  ``$TMPDIR``, so a file one command writes there is seen by the next), then ``.git``,
  ``.mini-codex`` and ``.codex`` under each root and every never-writable path
  (``$MINI_CODEX_HOME``) bound read-only again on top;
* a new user namespace with every capability dropped (``--unshare-user --cap-drop ALL``): root
  inside is powerless, so ``umount .git`` or ``mount -o remount,rw /`` fail even when mini-codex
  runs as root; bubblewrap sets ``no_new_privs``, so no setuid binary regains privileges;
* its own PID and IPC namespaces (the agent's processes are invisible and unkillable), a new
  session (no terminal injection), the network unshared unless the policy allows it, and death
  with the parent: when the command's process ends, the PID namespace ends and every background
  process it left is killed by the kernel. (A session's long-lived sandbox, ``server.py``, runs
  its command server as that process, with the same flags.)

``-try`` binds are used for paths that may not exist, so building the command line needs no
filesystem access. Detection runs ``bwrap`` once per executable with the same namespace flags
(cached for the process). ``danger-full-access`` never uses bwrap.
What does not belong here: which paths are writable (``policy.py``), running the command
(``exec.py``), choosing a fallback (``launch.py``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from typing import Literal

import anyio
import msgspec

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.policy import WritableRoots

__all__ = [
    "NAMESPACE_FLAGS",
    "PROBE_TIMEOUT_S",
    "SandboxAvailability",
    "bwrap_argv",
    "clear_detection_cache",
    "detect_bwrap",
]

PROBE_TIMEOUT_S = 10.0

NAMESPACE_FLAGS: tuple[str, ...] = (
    "--new-session",
    "--die-with-parent",
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--cap-drop",
    "ALL",
)
"""Flags every confined command gets (and the probe checks): see the module docstring."""


class SandboxAvailability(msgspec.Struct, frozen=True):
    """Whether commands can be confined on this machine, and why (not)."""

    kind: Literal["bwrap", "landlock", "none"]
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
    argv = [executable, *NAMESPACE_FLAGS]
    if not policy.network_access:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for root in roots.roots:
        argv += ["--bind-try", str(root), str(root)]
    # Bound after every writable root, so a later root cannot uncover them.
    for protected in (*roots.read_only_subpaths, *roots.never_writable):
        argv += ["--ro-bind-try", str(protected), str(protected)]
    argv += ["--chdir", chdir, "--"]
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
        *NAMESPACE_FLAGS,
        "--unshare-net",
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"),
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
