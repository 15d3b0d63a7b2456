"""``Thread`` (one conversation) and ``Turn`` (the result of one ``run``).

Each ``run`` opens a session in the caller's event loop through the thread's opener (``Codex``
gives it one that goes through ``mini_codex.host``), runs one turn and closes it; the next ``run``
resumes the same rollout, so a thread survives the process (``thread.id`` is the rollout's thread
id, set once the first run started). Events come from the session through the one
``ExecEventMapper`` that ``exec --json`` uses.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from mini_codex.errors import MiniCodexError
from mini_codex.mcp.elicitation import ElicitationHandler
from mini_codex.protocol import InputImage, InputText, Message, ResponseItem
from mini_codex.protocol.exec_events import (
    AgentMessageItem,
    ExecEvent,
    ExecItem,
    ItemCompleted,
    ThreadError,
    ThreadStarted,
    TurnCompleted,
    TurnFailed,
    Usage,
)
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.exec_events import ExecEventMapper
from mini_codex.runtime.output_schema import OutputSchemaError, check_schema, final_message_error
from mini_codex.sdk.errors import CodexError, CodexInputError, TurnFailedError, codex_error
from mini_codex.skills.model import SkillSelection
from mini_codex.tools.images import image_data_url

if TYPE_CHECKING:
    from mini_codex.host import Session

__all__ = [
    "CodexError",
    "Input",
    "StreamedTurn",
    "Thread",
    "ThreadOpener",
    "ThreadOptions",
    "Turn",
]

Input: TypeAlias = str | Sequence[Mapping[str, Any]]
"""A prompt, or parts: ``{"type": "text", "text": ...}`` / ``{"type": "local_image", "path"}`` /
``{"type": "skill", "name": ..., "path": ".../SKILL.md"}`` (the skill's file is injected)."""


class _TurnInput(NamedTuple):
    items: str | list[ResponseItem]
    skills: list[SkillSelection]


@dataclass(frozen=True)
class ThreadOptions:
    working_directory: Path
    model: str | None = None
    sandbox_mode: str | None = None
    approval_policy: str | None = None
    elicitation_callback: ElicitationHandler | None = None
    """Answers MCP servers' elicitation requests (``async (ElicitationRequest) ->
    ElicitationAnswer``); None declines them. The answer is checked against the requested
    schema: one that does not match is not sent (the server gets ``decline``)."""


ThreadOpener = Callable[
    [ThreadOptions, Path | None, Callable[[SessionEvent], None]],
    AbstractAsyncContextManager["Session"],
]
"""Opens the session of one run: the thread's options, the rollout to resume (None: a new
thread), the event callback."""


@dataclass(frozen=True)
class Turn:
    """A completed turn: the last agent message, every completed item, the token usage."""

    final_response: str
    items: list[ExecItem]
    usage: Usage | None


@dataclass
class StreamedTurn:
    """``events`` async-iterates the turn's exec events (the ``exec --json`` objects)."""

    events: AsyncGenerator[ExecEvent, None]
    """Leaving the iteration early (``break`` + ``aclose()``) interrupts the turn."""


def _turn_input(value: Input) -> _TurnInput:
    if isinstance(value, str):
        return _TurnInput(value, [])
    parts: list[Any] = []
    skills: list[SkillSelection] = []
    for part in value:
        match part.get("type"):
            case "text":
                parts.append(InputText(text=str(part.get("text", ""))))
            case "local_image":
                parts.append(InputImage(image_url=image_data_url(Path(str(part.get("path"))))))
            case "skill":
                path, name = part.get("path"), part.get("name")
                if not isinstance(path, str) or not path:
                    raise CodexInputError("a skill input part needs a path (its SKILL.md)")
                selection_name = name if isinstance(name, str) else None
                skills.append(SkillSelection(str(Path(path).resolve()), selection_name))
            case other:
                raise CodexInputError(
                    f"unknown input part type {other!r} (text, local_image, skill)"
                )
    return _TurnInput([Message(role="user", content=parts)] if parts else [], skills)


@dataclass
class _Outcome:
    error: MiniCodexError | None = None
    final_message: str | None = None
    failed: str | None = None


class Thread:
    """One conversation; create it with ``Codex.start_thread`` or ``Codex.resume_thread``."""

    def __init__(
        self,
        opener: ThreadOpener,
        options: ThreadOptions,
        *,
        rollout: Path | None = None,
        thread_id: str | None = None,
    ) -> None:
        self._opener = opener
        self._options = options
        self._rollout = rollout
        self._id = thread_id
        self._session: Session | None = None
        """The session of the running turn (so leaving ``run_streamed`` early can interrupt)."""

    @property
    def id(self) -> str | None:
        """The thread id (None until the first run started)."""
        return self._id

    @property
    def rollout_path(self) -> Path | None:
        return self._rollout

    async def run(self, input: Input, *, output_schema: dict[str, Any] | None = None) -> Turn:
        """Run one turn to completion; ``CodexError`` when it fails."""
        items: list[ExecItem] = []
        usage: Usage | None = None
        failure: str | None = None
        streamed = await self.run_streamed(input, output_schema=output_schema)
        async for event in streamed.events:
            match event:
                case ItemCompleted(item=item):
                    items.append(item)
                case TurnCompleted(usage=turn_usage):
                    usage = turn_usage
                case TurnFailed(error=error):
                    failure = error.message
                case ThreadError(message=message):
                    failure = failure or message
                case _:
                    pass
        if failure is not None:
            raise TurnFailedError(failure)
        final = next(
            (item.text for item in reversed(items) if isinstance(item, AgentMessageItem)), None
        )
        if output_schema is not None:
            problem = final_message_error(final, output_schema)
            if problem is not None:
                raise codex_error(OutputSchemaError(problem))
        return Turn(final_response=final or "", items=items, usage=usage)

    def run_sync(self, input: Input, *, output_schema: dict[str, Any] | None = None) -> Turn:
        """``run`` for scripts without an event loop."""

        async def main() -> Turn:
            return await self.run(input, output_schema=output_schema)

        return anyio.run(main)

    async def run_streamed(
        self, input: Input, *, output_schema: dict[str, Any] | None = None
    ) -> StreamedTurn:
        """Start a turn; its events arrive on ``.events`` as they happen. A turn that cannot
        start (bad settings, a missing model script) raises ``CodexError`` from ``.events``."""
        if output_schema is not None:
            try:
                check_schema(output_schema, source="output_schema")
            except MiniCodexError as exc:
                raise codex_error(exc) from exc
        try:
            turn_input = _turn_input(input)
        except MiniCodexError as exc:
            raise codex_error(exc) from exc
        return StreamedTurn(events=self._events(turn_input, output_schema))

    async def _events(
        self, turn_input: _TurnInput, output_schema: dict[str, Any] | None
    ) -> AsyncGenerator[ExecEvent, None]:
        send, receive = anyio.create_memory_object_stream[ExecEvent](math.inf)
        outcome = _Outcome()
        closed = False
        async with anyio.create_task_group() as group:
            group.start_soon(self._drive, turn_input, output_schema, send, outcome)
            async with receive:
                async for event in receive:
                    if isinstance(event, ThreadStarted):
                        self._id = event.thread_id
                    try:
                        yield event
                    except GeneratorExit:  # the consumer stopped early: interrupt the turn
                        closed = True
                        session = self._session
                        if session is not None and session.turn_active:
                            session.interrupt()  # aborted outputs and turn_aborted are recorded
                        else:
                            group.cancel_scope.cancel()
                        break
        if closed:
            return
        if outcome.error is not None:
            raise codex_error(outcome.error) from outcome.error

    async def _drive(
        self,
        turn_input: _TurnInput,
        output_schema: dict[str, Any] | None,
        send: MemoryObjectSendStream[ExecEvent],
        outcome: _Outcome,
    ) -> None:
        mapper = ExecEventMapper()

        def on_event(event: Any) -> None:
            for exec_event in mapper.feed(event):
                try:
                    send.send_nowait(exec_event)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return  # the consumer stopped listening; the turn is being cancelled

        async with send:
            try:
                async with self._opener(self._options, self._rollout, on_event) as session:
                    self._rollout = session.rollout_path
                    self._id = session.session_id
                    self._session = session
                    await session.run_turn(
                        turn_input.items, output_schema=output_schema, skills=turn_input.skills
                    )
            except MiniCodexError as exc:
                outcome.error = exc
            finally:
                self._session = None
