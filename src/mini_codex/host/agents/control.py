"""``AgentControl``: a session's child agents — spawn, input, wait, close, resume — and limits.

One control belongs to one session that may spawn (``features.multi_agent``, and its depth below
``agents.max_depth``). It owns a task group inside the parent's ``open_options`` block: each
child is a full session opened through :func:`mini_codex.host.open.open_options` (so host stays
the one place sessions are assembled) and served by one task (``child.py``). Closing the parent
closes every child (the task group is cancelled after their sessions shut down); an interrupted
parent turn interrupts the children's running turns (``on_parent_event``).

Statuses change only here; every change wakes the waiters (``wait``) and, for a final status a
turn produced, queues a ``<subagent_notification>`` in the parent's pending input (drained
before its next model request, like steered input). The open children are listed in the
parent's ``environments`` section (``subagents``) and all known children with their statuses in
the ``multi_agent`` world-state section (``section.py``), which is also what a resumed parent
restores them from: a child that was running when the process died is ``interrupted``, closed,
and ``resume_agent`` reopens it from its own rollout.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from mini_codex.errors import MiniCodexError
from mini_codex.host.agents.child import Child, Prompt, child_options, serve_child
from mini_codex.host.agents.section import restored_children
from mini_codex.host.agents.status import (
    INTERRUPTED,
    NICKNAMES,
    NOT_FOUND,
    PENDING_INIT,
    SHUTDOWN,
    AgentStatus,
    notification_text,
    roster_line,
)
from mini_codex.protocol import user_message
from mini_codex.rollout.paths import new_thread_id

if TYPE_CHECKING:
    from mini_codex.host.agents.child import Opener
    from mini_codex.host.assemble import SessionOptions
    from mini_codex.runtime.session import Session

__all__ = ["AgentControl", "check_id"]


def check_id(agent_id: str) -> None:
    """Agent ids are thread ids (UUIDs); anything else is refused, as Codex does."""
    try:
        uuid.UUID(agent_id)
    except ValueError:
        raise MiniCodexError(f"invalid agent id {agent_id}: not a thread id") from None


class AgentControl:
    """The child agents of one session (see the module docstring)."""

    def __init__(
        self,
        options: SessionOptions,
        *,
        depth: int = 0,
        child_tools: Callable[[int], Sequence[Any]],
        opener: Opener,
    ) -> None:
        self.options = options
        self.opener = opener
        """``host.open.open_options``: how a child's session is opened (host's one way)."""
        self.depth = depth
        self.max_threads = options.config.agents.max_threads
        self.max_depth = options.config.agents.max_depth
        self.children: dict[str, Child] = {}
        self.session: Session | None = None
        self.child_tools = child_tools
        """The built-in tools of a child at a depth (fresh instances: tools keep state)."""
        self._tg: TaskGroup | None = None
        self._changed = anyio.Event()
        self._names = 0

    # --- lifecycle (host/open.py) --------------------------------------------------------

    def start(self, task_group: TaskGroup) -> None:
        self._tg = task_group

    def attach(self, session: Session) -> None:
        """The parent session is open; a resumed one gets its recorded children back."""
        self.session = session
        for child in restored_children(session):
            child.depth = self.depth + 1
            self.children[child.id] = child
            self._names = max(self._names, len(self.children))

    async def aclose(self) -> None:
        """Close every open child (the parent session is closing)."""
        for child in list(self.children.values()):
            if child.open:
                await self._close(child)

    def on_parent_event(self, event: Any) -> None:
        """An interrupted parent turn interrupts every running child turn."""
        if getattr(event, "type", None) == "turn_aborted":
            for child in self.children.values():
                if child.session is not None and child.status.kind == "running":
                    child.session.interrupt()

    # --- what the parent's model sees ----------------------------------------------------

    def roster(self) -> str | None:
        lines = [roster_line(c.id, c.nickname) for c in self.children.values() if c.open]
        return "\n".join(lines) or None

    def status(self, agent_id: str) -> AgentStatus:
        check_id(agent_id)
        child = self.children.get(agent_id)
        return child.status if child is not None else NOT_FOUND

    async def changed(self) -> None:
        """Returns at the next status change of any child (front ends follow them this way)."""
        await self._changed.wait()

    def set_status(self, child: Child, status: AgentStatus, *, notify: bool = False) -> None:
        child.status = status
        self._changed.set()
        self._changed = anyio.Event()
        if notify and status.is_final and self.session is not None:
            message = user_message(notification_text(child.id, status))
            self.session.state.pending_input.append(message)

    # --- the tools' operations -----------------------------------------------------------

    async def spawn(
        self, prompt: Prompt, *, model: str | None = None, reasoning_effort: str | None = None
    ) -> Child:
        if self.depth + 1 > self.max_depth:
            raise MiniCodexError(f"agent depth limit reached (agents.max_depth = {self.max_depth})")
        open_count = sum(1 for c in self.children.values() if c.open)
        if open_count >= self.max_threads:
            raise MiniCodexError(
                f"agent thread limit reached (agents.max_threads = {self.max_threads}); "
                "close an agent first"
            )
        nickname = NICKNAMES[self._names % len(NICKNAMES)]
        if self._names >= len(NICKNAMES):
            nickname = f"{nickname} the {self._names // len(NICKNAMES) + 1}"
        self._names += 1
        now_ms = int(time.time() * 1000)
        child = Child(id=new_thread_id(now_ms, os.urandom(10)), nickname=nickname,
                      depth=self.depth + 1)  # fmt: skip
        child.inbox.append(prompt)
        await self._open(child, resume=False, model=model, effort=reasoning_effort)
        return child

    async def send_input(self, target: str, prompt: Prompt, *, interrupt: bool) -> str:
        child = self._open_child(target)
        if interrupt and child.session is not None and child.status.kind == "running":
            child.session.interrupt()
        child.inbox.append(prompt)
        child.wake.set()
        return new_thread_id(int(time.time() * 1000), os.urandom(10))

    async def resume(self, agent_id: str) -> AgentStatus:
        check_id(agent_id)
        child = self.children.get(agent_id)
        if child is None:
            raise MiniCodexError(f"agent with id {agent_id} not found")
        if not child.open:
            await self._open(child, resume=True)
        return child.status

    async def wait(
        self, targets: Sequence[str], timeout_s: float
    ) -> tuple[dict[str, AgentStatus], bool]:
        for target in targets:
            check_id(target)
        with anyio.move_on_after(timeout_s):
            while True:
                final = {t: self.status(t) for t in targets if self.status(t).is_final}
                if final:
                    return final, False
                await self._changed.wait()
        return {}, True

    async def close(self, target: str) -> AgentStatus:
        check_id(target)
        child = self.children.get(target)
        if child is None:
            raise MiniCodexError(f"agent with id {target} not found")
        previous = child.status
        if child.open:
            await self._close(child)
        return previous

    # --- internals -----------------------------------------------------------------------

    def _open_child(self, agent_id: str) -> Child:
        check_id(agent_id)
        child = self.children.get(agent_id)
        if child is None:
            raise MiniCodexError(f"agent with id {agent_id} not found")
        if not child.open:
            raise MiniCodexError(f"agent with id {agent_id} is closed; resume_agent reopens it")
        return child

    async def _open(
        self, child: Child, *, resume: bool, model: str | None = None, effort: str | None = None
    ) -> None:
        if self._tg is None or self.session is None:
            raise MiniCodexError("the session's agents are not running")
        options = child_options(self, child, resume=resume, model=model, effort=effort)
        self.children[child.id] = child
        child.open = True  # the slot is taken now, given back if the session fails to open
        child.closing = False
        child.done = anyio.Event()
        child.status = PENDING_INIT
        await self._tg.start(serve_child, self, child, options)

    async def _close(self, child: Child) -> None:
        child.closing = True
        child.wake.set()
        if child.session is not None and child.status.kind == "running":
            child.session.interrupt()
        await child.done.wait()

    def mark_closed(self, child: Child) -> None:
        child.open = False
        child.session = None
        self.set_status(child, SHUTDOWN if child.closing else child.status)

    def mark_interrupted(self, child: Child) -> None:
        self.set_status(child, INTERRUPTED)
