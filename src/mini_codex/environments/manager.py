"""The thread's environments: selections, background resolution, per-step readiness snapshots.

``ThreadEnvironments`` (one per session, run with ``async with``) keeps one entry per configured
remote environment. An entry connects in the background as soon as the manager starts (websocket
or stdio, bounded by the connect/initialize timeouts), is **starting** until ``initialize``
answers, then **ready** (its shell from ``environmentInfo``); a failed attempt or a disconnect makes
it **failed** with the error. A failed entry is retried when a later snapshot asks
(``snapshot`` → ``_poke``, at most once per ``retry_after_s``), so an executor that comes back is
ready again on a later step. ``local`` is always ready.

``snapshot(ids)`` never blocks: it reads each entry's current state, in the given (selection)
order, and never adds ids it was not given (a step does not adopt newer selections).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Literal

import anyio
import msgspec
from anyio.abc import TaskGroup

from mini_codex.environments.client import ExecServerClient
from mini_codex.environments.config import LOCAL_ID, EnvironmentsConfig, ExecutorSpec
from mini_codex.environments.transport import MessageStream, open_websocket, spawn_stdio

__all__ = ["EnvironmentSnapshot", "EnvironmentView", "Readiness", "ThreadEnvironments"]

Readiness = Literal["ready", "starting", "failed"]


class EnvironmentView(msgspec.Struct, frozen=True):
    """One selected environment as a step sees it."""

    id: str
    cwd: str
    state: Readiness
    shell: str | None = None
    error: str | None = None
    client: ExecServerClient | None = None
    """The executor connection (None for ``local`` and for one that is not ready)."""
    capability_roots: tuple[str, ...] = ()
    """Skill folders on the executor (``ExecutorSpec.capability_roots``)."""

    @property
    def is_local(self) -> bool:
        return self.id == LOCAL_ID


class EnvironmentSnapshot(msgspec.Struct, frozen=True):
    """The step's environments in selection order; the primary one is the first ready one."""

    entries: tuple[EnvironmentView, ...] = ()

    @property
    def primary(self) -> EnvironmentView | None:
        return next((entry for entry in self.entries if entry.state == "ready"), None)

    @property
    def multiple(self) -> bool:
        return len(self.entries) > 1

    def get(self, env_id: str) -> EnvironmentView | None:
        return next((entry for entry in self.entries if entry.id == env_id), None)


class _Entry(msgspec.Struct):
    spec: ExecutorSpec
    state: Readiness = "starting"
    shell: str | None = None
    error: str | None = None
    client: ExecServerClient | None = None
    failed_at: float = 0.0
    retry: anyio.Event = msgspec.field(default_factory=anyio.Event)
    attempted: anyio.Event = msgspec.field(default_factory=anyio.Event)
    """Set when the first connection attempt ended (ready or failed)."""


class ThreadEnvironments:
    def __init__(
        self,
        config: EnvironmentsConfig,
        *,
        cwd: str,
        local_shell: str | None,
        spawn_env: Mapping[str, str],
        retry_after_s: float = 1.0,
    ) -> None:
        self.config = config
        self.cwd = cwd
        self.local_shell = local_shell
        self.spawn_env = dict(spawn_env)
        """The environment a stdio executor program starts with."""
        self.retry_after_s = retry_after_s
        self._entries = {spec.id: _Entry(spec) for spec in config.executors}
        self._tg: TaskGroup | None = None
        self._settled = False

    def selection_ids(self) -> list[str]:
        return self.config.ids()

    async def __aenter__(self) -> ThreadEnvironments:
        self._tg = await anyio.create_task_group().__aenter__()
        for entry in self._entries.values():
            self._tg.start_soon(self._maintain, entry)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)

    async def _connect(self, spec: ExecutorSpec) -> MessageStream:
        if spec.url is not None:
            return await open_websocket(spec.url, timeout_s=spec.connect_timeout_s)
        assert spec.program is not None
        env = {**self.spawn_env, **spec.env}
        return await spawn_stdio(spec.program, spec.args, env=env, cwd=spec.cwd)

    async def _maintain(self, entry: _Entry) -> None:
        while True:
            entry.state, entry.error = "starting", None
            try:
                stream = await self._connect(entry.spec)
            except ConnectionError as exc:
                self._failed(entry, f"exec-server connection attempt failed: {exc}")
            else:
                client = ExecServerClient(stream)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.run)
                    try:
                        info = await client.initialize(timeout_s=entry.spec.initialize_timeout_s)
                    except Exception as exc:
                        self._failed(entry, f"exec-server initialize failed: {exc}")
                        tg.cancel_scope.cancel()
                    else:
                        shell = info.get("shell")
                        name = shell.get("name") if isinstance(shell, dict) else None
                        entry.shell = name if isinstance(name, str) else None
                        entry.client, entry.state = client, "ready"
                        entry.attempted.set()
                if entry.state == "ready":  # the reader ended: the executor went away
                    reason = client.closed_reason or "the connection closed"
                    self._failed(entry, f"exec-server disconnected: {reason}")
            await entry.retry.wait()
            entry.retry = anyio.Event()

    def _failed(self, entry: _Entry, error: str) -> None:
        entry.state, entry.error, entry.client = "failed", error, None
        entry.failed_at = time.monotonic()
        entry.attempted.set()

    async def settle(self) -> None:
        """Once per session (the first step): wait up to ``startup_grace_s`` for every first
        connection attempt to end, as Codex's first request waits for its executors."""
        if self._settled:
            return
        self._settled = True
        with anyio.move_on_after(self.config.startup_grace_s):
            for entry in self._entries.values():
                await entry.attempted.wait()

    def _poke(self, entry: _Entry) -> None:
        if entry.state == "failed" and time.monotonic() - entry.failed_at >= self.retry_after_s:
            entry.retry.set()

    def snapshot(self, ids: Sequence[str] | None = None) -> EnvironmentSnapshot:
        """Current readiness of ``ids`` (default: the configured selections), in that order."""
        views: list[EnvironmentView] = []
        for env_id in ids if ids is not None else self.selection_ids():
            if env_id == LOCAL_ID:
                views.append(EnvironmentView(LOCAL_ID, self.cwd, "ready", self.local_shell))
                continue
            entry = self._entries.get(env_id)
            if entry is None:
                continue  # unknown ids are skipped (Codex warns)
            self._poke(entry)
            client = entry.client if entry.state == "ready" else None
            if client is not None and not client.connected:
                self._failed(entry, f"exec-server disconnected: {client.closed_reason}")
                client = None
            views.append(
                EnvironmentView(
                    env_id,
                    self.cwd,
                    entry.state,
                    entry.shell,
                    entry.error,
                    client,
                    entry.spec.capability_roots,
                )
            )
        return EnvironmentSnapshot(tuple(views))
