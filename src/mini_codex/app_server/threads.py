"""Live threads: one session each, turns run as tasks, and the registry of one connection.

A ``LiveThread`` owns its session for as long as it is loaded: ``run`` opens it through
``sessions.open_thread_session`` and keeps it open until ``close``. ``start_turn`` returns the
``inProgress`` turn at once and runs it in the thread's task group; the turn emits
``thread/status/changed`` (active), ``turn/started``, the user message item, whatever the
session's events map to (``notifications.ThreadNotifier``), then ``thread/status/changed`` (idle)
and ``turn/completed`` with status ``completed``, ``interrupted`` or ``failed`` (+ ``error``).
Anything a turn raises is caught there: a failing thread never ends the server.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from mini_codex.app_server.approvals import client_approval_callback
from mini_codex.app_server.elicitation import client_elicitation_callback
from mini_codex.app_server.notifications import ThreadNotifier
from mini_codex.app_server.rpc import INVALID_REQUEST, Connection, RpcError
from mini_codex.app_server.sessions import HostValues, ThreadSpec, open_thread_session
from mini_codex.errors import MiniCodexError
from mini_codex.protocol import ResponseItem
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.skills.model import SkillSelection

if TYPE_CHECKING:
    from mini_codex.host import Session

__all__ = ["LiveThread", "TurnRecord"]

JsonDict = dict[str, Any]
log = logging.getLogger("mini_codex.app_server")


@dataclass
class TurnRecord:
    id: str
    started_at: float = field(default_factory=time.time)
    status: str = "inProgress"
    error: JsonDict | None = None
    completed_at: float | None = None
    items: list[JsonDict] = field(default_factory=list)
    interrupt_requested: bool = False
    """``turn/interrupt`` came before the session's turn began: it never starts."""

    def to_json(self, *, with_items: bool = False) -> JsonDict:
        duration = (
            int((self.completed_at - self.started_at) * 1000)
            if self.completed_at is not None
            else None
        )
        return {
            "id": self.id,
            "items": list(self.items) if with_items else [],
            "status": self.status,
            "error": self.error,
            "startedAt": int(self.started_at),
            "completedAt": int(self.completed_at) if self.completed_at is not None else None,
            "durationMs": duration,
        }


class LiveThread:
    def __init__(self, host: HostValues, spec: ThreadSpec, connection: Connection) -> None:
        self.host = host
        self.spec = spec
        self.connection = connection
        self.notifier = ThreadNotifier(connection.notify, str(spec.cwd))
        self.session: Session | None = None
        self.id = ""
        self.created_at = time.time()
        self.updated_at = self.created_at
        self.name: str | None = None
        self.preview = ""
        self.turn: TurnRecord | None = None
        self.status: JsonDict = {"type": "idle"}
        self._ready = anyio.Event()
        self._failure: BaseException | None = None
        self._stop = anyio.Event()
        self._closed = anyio.Event()
        self._tg: TaskGroup | None = None
        self._waiting = 0

    # --- lifetime --------------------------------------------------------------------------------

    async def run(self) -> None:
        """Open the session and keep it until ``close`` (run as a task of the server)."""
        callback = client_approval_callback(
            self.connection,
            thread_id=lambda: self.id,
            turn_id=lambda: self.notifier.turn_id,
            cwd=lambda: self.notifier.cwd,
            waiting=self._set_waiting,
        )
        elicitation = client_elicitation_callback(
            self.connection,
            thread_id=lambda: self.id,
            turn_id=lambda: self.turn.id if self.turn is not None else None,
            asks=lambda: self.session is None or self.session.approval_policy != "never",
            waiting=self._set_waiting,
            on_warning=self._warn,
        )
        try:
            async with open_thread_session(
                self.host,
                self.spec,
                on_event=self._on_event,
                approval_callback=callback,
                elicitation_callback=elicitation,
            ) as session:
                self.session = session
                self.id = session.session_id
                self.notifier.thread_id = self.id
                async with anyio.create_task_group() as tg:
                    self._tg = tg
                    self._ready.set()
                    await self._stop.wait()
                    session.interrupt()
        except Exception as exc:  # one thread's failure never ends the server
            if not self._ready.is_set():
                self._failure = exc
            else:
                log.exception("thread %s failed", self.id)
                self._set_status({"type": "systemError"})
        finally:
            self._ready.set()
            self.session = None
            self._closed.set()

    async def opened(self) -> None:
        """Wait until the session is open; raises what opening it raised."""
        await self._ready.wait()
        if self._failure is not None:
            failure = self._failure
            if isinstance(failure, MiniCodexError):
                raise RpcError(INVALID_REQUEST, str(failure)) from None
            raise failure

    async def close(self) -> None:
        """Interrupt the running turn, close the session (and its rollout), wait for it."""
        self._stop.set()
        await self._closed.wait()

    @property
    def loaded(self) -> bool:
        return self.session is not None

    @property
    def rollout_path(self) -> Path | None:
        return self.session.rollout_path if self.session is not None else None

    # --- events and status -----------------------------------------------------------------------

    def _on_event(self, event: SessionEvent) -> None:
        self.notifier.feed(event)

    def _set_status(self, status: JsonDict) -> None:
        self.status = status
        self.connection.notify("thread/status/changed", {"threadId": self.id, "status": status})

    def _warn(self, message: str) -> None:
        self.connection.notify("warning", {"threadId": self.id, "message": message})

    def _set_waiting(self, waiting: bool) -> None:
        self._waiting += 1 if waiting else -1
        flags = ["waitingOnApproval"] if self._waiting > 0 else []
        self._set_status({"type": "active", "activeFlags": flags})

    # --- turns -----------------------------------------------------------------------------------

    def _require_session(self) -> tuple[Session, TaskGroup]:
        if self.session is None or self._tg is None:
            raise RpcError(INVALID_REQUEST, f"thread {self.id} is not loaded")
        return self.session, self._tg

    def start_turn(
        self,
        items: list[ResponseItem],
        content: list[JsonDict],
        skills: tuple[SkillSelection, ...] = (),
    ) -> TurnRecord:
        session, tg = self._require_session()
        if self.turn is not None:
            raise RpcError(
                INVALID_REQUEST,
                f"thread {self.id} already has a running turn ({self.turn.id}); "
                "use turn/steer to add input to it",
            )
        turn = TurnRecord(id=str(uuid.uuid4()))
        self.turn = turn
        if not self.preview:
            self.preview = next((c["text"] for c in content if c.get("type") == "text"), "")

        async def action() -> Any:
            return await session.run_turn(items, skills=skills)

        tg.start_soon(self._run_turn, turn, action, content)
        return turn

    def start_compaction(self) -> TurnRecord:
        session, tg = self._require_session()
        if self.turn is not None:
            raise RpcError(INVALID_REQUEST, f"thread {self.id} has a running turn")
        turn = TurnRecord(id=str(uuid.uuid4()))
        self.turn = turn
        tg.start_soon(self._run_turn, turn, session.compact, None)
        return turn

    async def _run_turn(
        self,
        turn: TurnRecord,
        action: Callable[[], Awaitable[Any]],
        content: list[JsonDict] | None,
    ) -> None:
        notifier = self.notifier
        notifier.begin_turn(turn.id)
        self._set_status({"type": "active", "activeFlags": []})
        self.connection.notify("turn/started", {"threadId": self.id, "turn": turn.to_json()})
        if content is not None:
            item = {"type": "userMessage", "id": str(uuid.uuid4()), "content": content}
            notifier.item_started(item)
            notifier.item_completed(item)
        try:
            if turn.interrupt_requested:
                notifier.aborted = True
            else:
                await action()
        except MiniCodexError as exc:
            notifier.turn_error = notifier.turn_error or str(exc)
        except Exception as exc:
            log.exception("turn %s of thread %s failed", turn.id, self.id)
            notifier.turn_error = notifier.turn_error or f"internal error: {exc}"
        turn.completed_at = self.updated_at = time.time()
        if notifier.aborted:
            turn.status = "interrupted"
        elif notifier.turn_error is not None:
            turn.status, turn.error = "failed", {"message": notifier.turn_error}
        else:
            turn.status = "completed"
        turn.items = [i for i in notifier.completed_items if i["type"] == "agentMessage"]
        self.turn = None
        self._set_status({"type": "idle"})
        completed = {**turn.to_json(with_items=True), "itemsView": "summary"}
        self.connection.notify("turn/completed", {"threadId": self.id, "turn": completed})

    def steer(self, text: str, expected_turn_id: str) -> str:
        session, _ = self._require_session()
        if self.turn is None:
            raise RpcError(INVALID_REQUEST, f"thread {self.id} has no running turn to steer")
        if expected_turn_id != self.turn.id:
            raise RpcError(
                INVALID_REQUEST,
                f"expectedTurnId {expected_turn_id} is not the running turn {self.turn.id}",
            )
        try:
            session.steer(text)
        except MiniCodexError as exc:
            raise RpcError(INVALID_REQUEST, str(exc)) from None
        return self.turn.id

    def interrupt(self, turn_id: str) -> None:
        session, _ = self._require_session()
        if self.turn is None or self.turn.id != turn_id:
            raise RpcError(INVALID_REQUEST, f"turn {turn_id} is not running on thread {self.id}")
        self.turn.interrupt_requested = True
        session.interrupt()
