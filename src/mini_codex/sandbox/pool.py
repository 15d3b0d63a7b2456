"""A session's sandboxes: run a confined command in a long-lived sandbox, started on first use.

``SandboxPool.run(prepared, ...)`` runs what ``launch.confine`` prepared (``start_on_terminal``
does the same for a command on a PTY, ``exec_command``):

* bubblewrap or the Landlock shim (``prepared.confinement``) and ``long_lived``: in the session's
  sandbox for the request (``server.py``), started lazily on the first such command. The sandbox
  is keyed by the confinement's whole command line (policy, cwd, writable roots, protected paths,
  network) and by which of those paths exist, where they point and which directory they are
  (bubblewrap binds only paths that exist when it starts, and keeps the directory it bound; under
  Landlock the key also holds the shim's write grants, which list what exists): when any of it
  changes — ``/approvals``, ``--cd``, a ``.git`` made since, a root deleted and made again — the
  next command gets a new sandbox and the old one ends as soon as no command runs in it. Mounts
  made on the host after a bubblewrap sandbox started are not seen in it. A sandbox found gone
  before it took the request (a command killed its server) is replaced and the request sent
  again; one that ends after taking it reports the command killed (it may have run).
* anything else (``long_lived`` off, escalated and ``danger-full-access`` commands):
  ``exec.run_command`` on ``prepared.argv``; so is a request too large for one packet.

Either way the result has ``exec.run_command``'s semantics. ``aclose`` ends every sandbox (the
session's close); they never outlive the process anyway (``bwrap --die-with-parent``; the
Landlock server's ``PR_SET_PDEATHSIG``).
What does not belong here: choosing the confinement (``launch.py``), the approval decision.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import anyio

from mini_codex.sandbox.exec import DEFAULT_MAX_CAPTURE_BYTES, ExecResult, run_command, supervise
from mini_codex.sandbox.landlock import landlock_argv
from mini_codex.sandbox.landlock_shim import write_grants
from mini_codex.sandbox.launch import (
    PreparedCommand,
    SandboxRequest,
    bwrap_prefix,
    resolved_roots,
)
from mini_codex.sandbox.server import (
    START_TIMEOUT_S,
    RequestTooLargeError,
    SandboxGoneError,
    SandboxServer,
    ServerCommand,
)

__all__ = ["SandboxPool", "sandbox_key"]

_Key = tuple[tuple[str, ...], tuple[object, ...]]
_SERVED = ("bwrap", "landlock")


def sandbox_key(request: SandboxRequest, confinement: str) -> tuple[list[str], _Key]:
    """The confinement's command line for a server for ``request`` and the key of the sandbox
    that may run it."""
    roots = resolved_roots(request)
    paths = (*roots.roots, *roots.read_only_subpaths, *roots.never_writable)
    state: tuple[object, ...] = tuple((os.path.realpath(path), _identity(path)) for path in paths)
    if confinement == "landlock":
        prefix = landlock_argv(
            [], roots=roots, network_access=request.policy.network_access, server=True
        )
        spec = json.loads(prefix[-2])
        # Landlock grants what exists when it confines: a new entry next to .git changes them.
        state += (write_grants(spec["writable"], spec["protected"]),)
    else:
        prefix = bwrap_prefix(request)
    return prefix, (tuple(prefix), state)


def _identity(path: object) -> tuple[int, int] | None:
    """Which file ``path`` is (a directory deleted and made again is another one: the sandbox's
    bind would still show the old one); None when it does not exist."""
    try:
        found = os.stat(str(path))
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


class SandboxPool:
    """The long-lived sandboxes of one session (see the module docstring)."""

    def __init__(self, *, long_lived: bool = True) -> None:
        self.long_lived = long_lived
        self._current: tuple[_Key, SandboxServer] | None = None
        self._retired: list[SandboxServer] = []
        self._lock = anyio.Lock()
        self.started = 0
        """Sandboxes started so far (tests, benchmarks)."""

    @property
    def server(self) -> SandboxServer | None:
        """The sandbox the last request used (None before the first)."""
        return self._current[1] if self._current is not None else None

    async def run(
        self,
        prepared: PreparedCommand,
        request: SandboxRequest,
        workdir: Path,
        *,
        env: Mapping[str, str],
        timeout_s: float | None,
        max_capture_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
        drain_timeout_s: float = 1.0,
        on_output: Callable[[bytes], None] | None = None,
    ) -> ExecResult:
        """Run ``prepared`` in ``workdir``; raises ``OSError`` when it cannot start."""
        started = time.monotonic()
        child: ServerCommand | None = None
        if self.long_lived and prepared.confinement in _SERVED and prepared.command:
            try:
                child = await self._start(prepared, request, workdir, env)
            except RequestTooLargeError:
                child = None  # run it with a bwrap of its own
        if child is None:
            return await run_command(
                prepared.argv,
                cwd=workdir,
                env=env,
                timeout_s=timeout_s,
                max_capture_bytes=max_capture_bytes,
                drain_timeout_s=drain_timeout_s,
                on_output=on_output,
            )
        try:
            return await supervise(
                child,
                started=started,
                timeout_s=timeout_s,
                max_capture_bytes=max_capture_bytes,
                drain_timeout_s=drain_timeout_s,
                on_output=on_output,
            )
        finally:
            with anyio.CancelScope(shield=True):
                await self._close_retired()

    async def start_on_terminal(
        self,
        prepared: PreparedCommand,
        request: SandboxRequest,
        workdir: Path,
        *,
        env: Mapping[str, str],
        terminal: int,
    ) -> ServerCommand | None:
        """Start ``prepared`` in the session's sandbox with ``terminal`` (a PTY's slave end) as
        its stdin, stdout and stderr; None when it is not run in a long-lived sandbox (the
        caller starts ``prepared.argv`` itself). The caller ``finish``es the command."""
        if not (self.long_lived and prepared.confinement in _SERVED and prepared.command):
            return None
        try:
            return await self._start(prepared, request, workdir, env, terminal)
        except RequestTooLargeError:
            return None

    async def release(self) -> None:
        """End the sandboxes a policy change left behind once nothing runs in them."""
        await self._close_retired()

    async def _start(
        self,
        prepared: PreparedCommand,
        request: SandboxRequest,
        workdir: Path,
        env: Mapping[str, str],
        terminal: int | None = None,
    ) -> ServerCommand:
        # Not the command's timeout: a loaded machine must not end a sandbox (and the commands
        # running in it) because a short command was slow to start.
        bound = START_TIMEOUT_S
        for attempt in (1, 2):
            server = await self._server_for(request, prepared.confinement)
            try:
                return await server.start_command(
                    prepared.command,
                    cwd=workdir,
                    env=env,
                    start_timeout_s=bound,
                    terminal=terminal,
                )
            except SandboxGoneError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _server_for(self, request: SandboxRequest, confinement: str) -> SandboxServer:
        async with self._lock:
            prefix, key = sandbox_key(request, confinement)
            if self._current is not None:
                current_key, server = self._current
                if current_key == key and server.alive:
                    return server
                self._retired.append(server)
                self._current = None
            await self._close_retired()
            server = await SandboxServer.start(prefix, landlock=confinement == "landlock")
            self.started += 1
            self._current = (key, server)
            return server

    async def _close_retired(self) -> None:
        keep = []
        for server in self._retired:
            if server.active > 0 and server.alive:
                keep.append(server)
            else:
                await server.aclose()
        self._retired = keep

    async def aclose(self) -> None:
        """End every sandbox of the pool (the session is closing)."""
        with anyio.CancelScope(shield=True):
            servers = [*self._retired]
            if self._current is not None:
                servers.append(self._current[1])
            self._current, self._retired = None, []
            for server in servers:
                await server.aclose()
