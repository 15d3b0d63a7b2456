"""The session host: opens the UI's ``Session`` and replaces it on ``/new`` and ``/resume``.

It runs beside the Textual app in the caller's task group (``run.py``), not inside the app, so a
session is always closed by structured concurrency: when the app exits — by ``/quit``, Ctrl+D or
an unhandled error — the host leaves ``Session.open`` and the rollout writer is flushed and closed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio

from mini_codex.errors import MiniCodexError

if TYPE_CHECKING:  # the protocol and the runtime load after the UI's first frame
    from mini_codex.host import Session
    from mini_codex.mcp.elicitation import (
        ElicitationAnswer,
        ElicitationHandler,
        ElicitationRequest,
    )
    from mini_codex.protocol.session_events import SessionEvent
    from mini_codex.runtime.approvals import ApprovalCallback

PICK = "pick"
"""A target that asks the person to pick a recorded session first."""

Target = Path | None | str
"""What the next session opens: a rollout to resume, None for a new session, or ``PICK``."""


class SessionOpener(Protocol):
    """``cli/`` builds this from argv and config: opens a session, resumed from ``resume``."""

    def __call__(
        self,
        resume: Path | None,
        approval_callback: ApprovalCallback,
        on_event: Callable[[SessionEvent], None],
        *,
        elicitation_callback: ElicitationHandler | None = None,
    ) -> AbstractAsyncContextManager[Session]: ...


class HostClient(Protocol):
    """What the host needs of the app."""

    mounted: anyio.Event

    def on_session_event(self, event: SessionEvent) -> None: ...

    async def elicitation_callback(self, request: ElicitationRequest) -> ElicitationAnswer: ...

    def attach(self, session: Session | None) -> None: ...

    def show_error(self, message: str, next_step: str) -> None: ...

    async def pick_session(self) -> Path | bool | None: ...


class SessionHost:
    def __init__(self, opener: SessionOpener, target: Target = None) -> None:
        self._opener = opener
        self._target: Target = target
        self._switch = anyio.Event()
        self._stopped = False
        self._stop_event = anyio.Event()
        self.sessions_opened = 0

    def switch(self, target: Target) -> None:
        self._target = target
        self._switch.set()

    def stop(self) -> None:
        self._stopped = True
        self._stop_event.set()
        self._switch.set()

    async def _unless_stopped(self, wait: Callable[[], Awaitable[object]]) -> object:
        """``wait()``'s result, or None as soon as the host is stopped."""
        result: list[object] = [None]
        async with anyio.create_task_group() as tg:

            async def stopper() -> None:
                await self._stop_event.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(stopper)
            result[0] = await wait()
            tg.cancel_scope.cancel()
        return result[0]

    async def run(self, app: HostClient, callback: ApprovalCallback) -> None:
        await self._unless_stopped(app.mounted.wait)
        while not self._stopped:
            self._switch = anyio.Event()
            target = self._target
            if target == PICK:
                picked = await self._unless_stopped(app.pick_session)
                if picked is False:  # cancelled: start a new session instead
                    picked = None
                self._target = picked if isinstance(picked, Path) else None
                continue
            resume = target if isinstance(target, Path) else None
            try:
                async with self._opener(
                    resume,
                    callback,
                    app.on_session_event,
                    elicitation_callback=app.elicitation_callback,
                ) as session:
                    self.sessions_opened += 1
                    app.attach(session)
                    try:
                        await self._switch.wait()
                    finally:
                        app.attach(None)
            except MiniCodexError as exc:
                app.show_error(str(exc), "/new starts a new session; /quit leaves")
                await self._switch.wait()
