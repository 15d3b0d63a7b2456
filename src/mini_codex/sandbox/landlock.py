"""The Landlock + seccomp fallback: the command line of the shim, and detecting that it works.

Where bubblewrap cannot create namespaces (nested containers, a missing package), a command runs
through ``python -I <dir>/landlock_shim.py SPEC -- ARGV...`` (the file, not ``-m``: importing the
``mini_codex`` package would cost far more than the confinement). The shim confines itself,
then ``exec``s the command (a re-exec shim, not ``preexec_fn``, so the confinement is applied by a
single-threaded process before anything of the command runs):

* Landlock: read and execute everywhere; write only beneath the writable roots, where each
  protected path (``.git``, ``.mini-codex``, ``.codex``, ``$MINI_CODEX_HOME``) is carved out by
  granting write on its siblings instead of its parent (a consequence: at a level that holds a
  protected path, existing files can be changed but new files cannot be created); TCP bind and
  connect denied unless the policy allows the network; signals to processes outside the sandbox
  denied (Landlock scopes), and so are ``ptrace`` and ``/proc/PID/environ`` of the agent.
* seccomp: ``socket`` for anything but ``AF_UNIX`` fails with ``EPERM`` unless the network is
  allowed; the ``chmod``/``chown`` families fail everywhere (Landlock does not cover them); so do
  ``setsid``/``setpgid``, so every process the command starts stays in its process group.
* every capability is dropped from the bounding set and ``no_new_privs`` is set, so root inside
  is powerless (no mount, no ``CAP_DAC_OVERRIDE``).

Landlock features follow the kernel's ABI (best effort): TCP rules need ABI 4 (seccomp blocks
sockets anyway), signal and abstract-socket scoping need ABI 6 (Linux 6.12); on older kernels a
command can signal other processes of the same user. Processes are not isolated in a PID
namespace here: the caller's process-group kill ends
background children (they cannot leave the group).
What does not belong here: the confinement itself (``landlock_shim.py``), choosing a backend
(``launch.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from mini_codex.sandbox.bwrap import PROBE_TIMEOUT_S, SandboxAvailability
from mini_codex.sandbox.policy import WritableRoots

__all__ = ["SHIM_PATH", "detect_landlock", "landlock_argv", "landlock_spec"]

SHIM_PATH = str(Path(__file__).with_name("landlock_shim.py"))
"""The shim runs as a script: it imports nothing from ``mini_codex``."""


def landlock_spec(roots: WritableRoots, *, network_access: bool, server: bool = False) -> str:
    """The JSON the shim reads: writable roots, protected paths, network; ``server``: the
    command is a session's command server (``server_main.py``), which may start sessions and
    denies ``setsid``/``setpgid`` to each command it starts."""
    spec: dict[str, object] = {
        "writable": [str(root) for root in roots.roots],
        "protected": [str(p) for p in (*roots.read_only_subpaths, *roots.never_writable)],
        "network": network_access,
    }
    if server:
        spec["server"] = True
    return json.dumps(spec, separators=(",", ":"))


def landlock_argv(
    command: Sequence[str],
    *,
    roots: WritableRoots,
    network_access: bool,
    python: str = sys.executable,
    shim: str = SHIM_PATH,
    server: bool = False,
) -> list[str]:
    """The argv running ``command`` confined by the shim (pure)."""
    if roots.unrestricted:
        raise ValueError("danger-full-access commands are not confined")
    spec = landlock_spec(roots, network_access=network_access, server=server)
    return [python, "-I", shim, spec, "--", *command]


async def detect_landlock() -> SandboxAvailability:
    """Whether the shim can confine a command here (runs it once with ``true``)."""
    argv = landlock_argv(["true"], roots=WritableRoots(unrestricted=False), network_access=False)
    try:
        with anyio.fail_after(PROBE_TIMEOUT_S):
            done = await anyio.run_process(argv, check=False, stdin=subprocess.DEVNULL)
    except TimeoutError:
        return SandboxAvailability(kind="none", reason="the Landlock probe timed out")
    except OSError as exc:
        return SandboxAvailability(kind="none", reason=f"the Landlock shim cannot run: {exc}")
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else f"exit {done.returncode}"
        return SandboxAvailability(kind="none", reason=f"Landlock unavailable: {reason}")
    return SandboxAvailability(kind="landlock", reason="Landlock + seccomp confinement works")
