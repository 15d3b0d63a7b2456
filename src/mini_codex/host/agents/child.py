"""One child agent's session: its options (derived from the parent's) and the task serving it.

:func:`child_options` derives a child's ``SessionOptions`` from its parent's: the same cwd,
home, model client (lent), config, sandbox, approval policy and approval callback (a child's
approval requests go to whoever answers the parent's), a fresh set of built-in tools (the
``multi_agent_v1`` tools only while its depth is below ``agents.max_depth``), its own thread id
and rollout, whose ``session_meta`` records the spawn as Codex's ``SubAgent(ThreadSpawn)``
source does (``parent_thread_id``, ``depth``, ``agent_nickname``, ``agent_role``).

:func:`serve_child` opens the session and runs its input one turn at a time: each turn is
``running``; it ends ``completed`` (with the final message), ``errored`` (the turn's error) or
``interrupted``; a queued input starts the next turn. Closing ends the task and the session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from mini_codex.errors import MiniCodexError
from mini_codex.host.agents.status import PENDING_INIT, RUNNING, AgentStatus
from mini_codex.protocol import InputImage, InputText, Message, ResponseItem

if TYPE_CHECKING:
    from anyio.abc import TaskStatus

    from mini_codex.host.assemble import SessionOptions
    from mini_codex.runtime.session import Session

__all__ = [
    "Child",
    "ChildHost",
    "Opener",
    "Prompt",
    "TurnTracker",
    "child_options",
    "serve_child",
    "spawn_meta",
    "turn_input",
]

Prompt = str | list[Any]
Opener = Callable[["SessionOptions"], AbstractAsyncContextManager["Session"]]


@dataclass(eq=False)
class Child:
    """One child agent as its parent knows it."""

    id: str
    nickname: str | None
    depth: int
    status: AgentStatus = PENDING_INIT
    open: bool = False
    rollout_path: Path | None = None
    session: Session | None = None
    inbox: list[Prompt] = field(default_factory=list)
    wake: anyio.Event = field(default_factory=anyio.Event)
    """Set when input arrives or the child is asked to close."""
    closing: bool = False
    scope: anyio.CancelScope | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    tracker: Any = None
    """The child's ``TurnTracker`` (``child.py``)."""


class ChildHost(Protocol):
    """What a child needs of its parent's ``AgentControl`` (``control.py``)."""

    options: SessionOptions
    session: Session | None
    opener: Opener
    child_tools: Callable[[int], Sequence[Any]]

    def set_status(self, child: Child, status: AgentStatus, *, notify: bool = False) -> None: ...

    def mark_closed(self, child: Child) -> None: ...

    def mark_interrupted(self, child: Child) -> None: ...


@dataclass
class TurnTracker:
    """What a child's events said about its current turn."""

    error: str | None = None
    aborted: bool = False

    def see(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "error":
            self.error = str(getattr(event, "message", "error"))
        elif kind == "turn_aborted":
            self.aborted = True


def spawn_meta(parent_id: str, child: Child) -> dict[str, Any]:
    """The ``session_meta`` fields of a spawned child (Codex 0.169's, as recorded)."""
    spawn = {
        "parent_thread_id": parent_id,
        "depth": child.depth,
        "agent_path": None,
        "agent_nickname": child.nickname,
        "agent_role": None,
    }
    return {
        "parent_thread_id": parent_id,
        "source": {"subagent": {"thread_spawn": spawn}},
        "thread_source": "subagent",
        "agent_nickname": child.nickname,
        "multi_agent_version": "v1",
    }


def child_options(
    control: ChildHost,
    child: Child,
    *,
    resume: bool,
    model: str | None = None,
    effort: str | None = None,
) -> SessionOptions:
    parent = control.options
    assert control.session is not None
    config = parent.config
    if effort is not None:
        config = config.model_copy(update={"model_reasoning_effort": effort})
    resume_path: Path | None = None
    if resume:
        resume_path = child.rollout_path or _find_rollout(child.id, parent.home)
    tracker = TurnTracker()
    child.tracker = tracker
    return replace(
        parent,
        config=config,
        model=model or control.session.model,
        tools=control.child_tools(child.depth),
        resume_path=resume_path,
        on_event=tracker.see,
        on_request=None,
        agent_depth=child.depth,
        thread_id=None if resume else child.id,
        session_meta_extra=None if resume else spawn_meta(control.session.session_id, child),
    )


def _find_rollout(agent_id: str, home: Path) -> Path:
    from mini_codex.host.rollouts import find_rollout

    try:
        return find_rollout(agent_id, [home], what="agent")
    except MiniCodexError as error:
        raise MiniCodexError(
            f"agent with id {agent_id} has no rollout to resume: {error}"
        ) from None


def turn_input(prompt: Prompt) -> str | list[ResponseItem]:
    """A child's turn input: the message, or one user message of the structured items."""
    if isinstance(prompt, str):
        return prompt
    parts: list[Any] = []
    for item in prompt:
        kind = item.get("type")
        if kind == "text":
            parts.append(InputText(text=str(item.get("text", ""))))
        elif kind == "image" and item.get("image_url"):
            parts.append(InputImage(image_url=str(item["image_url"])))
        elif kind == "local_image" and item.get("path"):
            from mini_codex.tools.images import image_data_url

            parts.append(InputImage(image_url=image_data_url(Path(str(item["path"])))))
        else:  # skill, mention, audio: named for the child as a link
            label = item.get("name") or kind
            parts.append(InputText(text=f"[{label}]({item.get('path', '')})"))
    return [Message(role="user", content=parts)]


async def serve_child(
    control: ChildHost,
    child: Child,
    options: SessionOptions,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    started = False
    try:
        async with control.opener(options) as session:
            child.session = session
            child.open = True
            child.rollout_path = session.rollout_path
            started = True
            task_status.started()
            await _serve(control, child, session)
    except Exception as error:
        if not started:
            raise
        control.set_status(child, AgentStatus("errored", str(error)), notify=True)
    finally:
        control.mark_closed(child)
        child.done.set()


async def _serve(control: ChildHost, child: Child, session: Session) -> None:
    tracker: TurnTracker = child.tracker
    while not child.closing:
        if not child.inbox:
            await child.wake.wait()
            child.wake = anyio.Event()
            continue
        prompt = child.inbox.pop(0)
        tracker.error, tracker.aborted = None, False
        control.set_status(child, RUNNING)
        result = await session.run_turn(turn_input(prompt))
        if tracker.aborted:
            control.mark_interrupted(child)
        elif tracker.error is not None:
            control.set_status(child, AgentStatus("errored", tracker.error), notify=True)
        else:
            control.set_status(child, AgentStatus("completed", result), notify=True)
