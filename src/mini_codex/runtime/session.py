"""The Session: owns history, the rollout recorder, the step captures and the event stream.

Opened with ``Session.open(settings, services)`` (an async context manager owning a task group
and, when persisting, a rollout recorder) by ``mini_codex.host``, its only caller, which builds
both. Input goes in with ``run_turn`` (a whole turn, after the running one), ``submit`` (start
a turn in the background, or steer the running one) and ``interrupt()``; input steered too late
for a turn is answered by a follow-up turn. Everything observable comes out as ``SessionEvent``s
(``on_event`` and every ``subscribe()`` stream); a failed turn becomes an ``error`` event and the
session stays usable. ``resume_path`` continues a rollout: history, world-state baseline,
reference context and previous model are restored, so nothing is re-injected when unchanged.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from msgspec.structs import replace

from mini_codex.context import ContextManager
from mini_codex.context.window import WindowInfo
from mini_codex.discovery.workspace import WorkspaceScanner
from mini_codex.errors import (
    EmptyInputError,
    ExpectedTurnMismatchError,
    MiniCodexError,
    NoActiveTurnError,
)
from mini_codex.models.base import ModelClient, Prompt
from mini_codex.protocol import Message, ResponseItem, message_text, user_message
from mini_codex.protocol.session_events import SessionConfigured, SessionEvent, WarningEvent
from mini_codex.rollout.recorder import RolloutRecorder
from mini_codex.runtime.approvals import SessionApprovals
from mini_codex.runtime.capture import CaptureCaches
from mini_codex.runtime.contexts import TurnContext
from mini_codex.runtime.environments_step import ThreadSelections
from mini_codex.runtime.hooks import Hooks
from mini_codex.runtime.recording import Recording
from mini_codex.runtime.session_settings import SessionServices, SessionSettings
from mini_codex.runtime.session_start import (
    checkpoint_if_due,
    open_rollout,
    start_environments,
    start_mcp,
)
from mini_codex.runtime.turn import TurnDeps, TurnState, run_compact_task, run_turn
from mini_codex.skills.model import SkillSelection

if TYPE_CHECKING:  # the MCP SDK is imported only when MCP servers are configured (issue 13)
    from collections.abc import Callable

    from mini_codex.mcp.runtime import McpRuntime

__all__ = [
    "EmptyInputError",
    "ExpectedTurnMismatchError",
    "NoActiveTurnError",
    "Session",
    "SessionServices",
    "SessionSettings",
]


class Session:
    def __init__(
        self, settings: SessionSettings, services: SessionServices, task_group: TaskGroup
    ) -> None:
        self.settings = settings
        self.config = settings.config
        self.model = settings.model
        self.sandbox = settings.sandbox
        self.approval_policy = settings.approval_policy
        self.base_instructions = settings.base_instructions
        self.cwd = settings.cwd
        self.client: ModelClient = services.client
        self.on_request: Callable[[Prompt], None] | None = services.on_request
        self._on_event = services.on_event
        self._startup_warnings = list(services.startup_warnings)
        self._services = services
        self._retry = services.retry
        self._tg = task_group
        self._subscribers: list[MemoryObjectSendStream[SessionEvent]] = []
        self.history = ContextManager()
        self.recorder: RolloutRecorder | None = None
        self.rollout_path: Path | None = None
        self.session_id = ""
        self.recording = Recording(self.history, None, self._emit)
        self.recording.tool_output_token_limit = settings.config.tool_output_token_limit
        self.recording.model = self.model
        self.state = TurnState(self.recording, checkpoint=self._maybe_checkpoint)
        self._closeable_tools = [
            entry.tool for entry in services.tools if hasattr(entry.tool, "aclose")
        ]
        self.hooks = Hooks(
            settings.config.hooks,
            settings.config.notify,
            cwd=self.cwd,
            env=settings.env,
            shell=settings.shell,
            session_id=lambda: self.session_id,
            on_warning=self._warn,
        )
        self.approvals = SessionApprovals(
            self.recording,
            rules=services.rules,
            callback=services.approval_callback,
            on_abort=self.interrupt,
        )
        self.capture = replace(
            services.capture,
            tools=services.tools,
            on_warning=self._warn,
            wrap_tool=self.hooks.wrap if self.hooks.wraps_tools else None,
            approvals=self.approvals,
        )
        """What every step capture reads (tests may replace it between steps)."""
        self.caches = CaptureCaches(
            scanner=WorkspaceScanner(self.cwd),
            skills=services.skills,
            environments=services.environments,
        )
        """What step captures keep across steps (the workspace scanner, AGENTS.md cache, …)."""
        self.selections = ThreadSelections(services.environments, self.cwd)
        self.mcp: McpRuntime | None = None
        self._active: anyio.CancelScope | None = None
        self._active_turn_id = ""
        self._turn_done: anyio.Event | None = None
        self._closing = False
        self._environments_scope: anyio.CancelScope | None = None
        self.agents: Any = None
        """The session's child agents (``host.agents.AgentControl``) when it may spawn them."""

    def _warn(self, message: str) -> None:
        self._emit(WarningEvent(message=message))

    # --- lifecycle ---------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(
        cls, settings: SessionSettings, services: SessionServices
    ) -> AsyncIterator[Session]:
        try:
            async with anyio.create_task_group() as task_group:
                session = cls(settings, services, task_group)
                await session._start()
                try:
                    yield session
                finally:
                    with anyio.CancelScope(shield=True):
                        await session._shutdown()
        except BaseExceptionGroup as group:
            # One library error (a required MCP server that cannot start, a locked rollout)
            # is raised as itself, not wrapped by the task group, so callers can report it.
            if len(group.exceptions) == 1 and isinstance(group.exceptions[0], MiniCodexError):
                raise group.exceptions[0] from None
            raise

    async def _start(self) -> None:
        options = self.settings
        self._environments_scope = start_environments(self.caches.environments, self._tg)
        # MCP servers start in the background; a ``required`` one that cannot start fails here.
        self.mcp = await start_mcp(options, self._services, self._tg, self._warn)
        resumed = options.resume_path is not None
        rollout = open_rollout(options, self.history, self.state, self.approvals, self.caches)
        self.session_id, self.rollout_path, self.recorder, self.selections.restored = rollout
        if self.recorder is not None:
            await self.recorder.start(self._tg)
        self.recording.recorder = self.recorder
        self._emit(
            SessionConfigured(
                session_id=self.session_id,
                model=self.model,
                cwd=str(self.cwd),
                rollout_path=str(self.rollout_path) if self.rollout_path else None,
                resumed=resumed,
            )
        )
        for warning in self._startup_warnings:  # plugins that did not load
            self._emit(WarningEvent(message=warning))
        await self.hooks.session_start("resume" if resumed else "startup")

    @property
    def window(self) -> WindowInfo:
        """The context window the session is in (advanced by every compaction)."""
        return self.state.window

    @property
    def context_tokens(self) -> int:
        """Active context tokens (spec §8.1)."""
        return self.state.context_tokens

    async def _shutdown(self) -> None:
        self._closing = True
        if self._active is not None:
            self._active.cancel()
        if self._turn_done is not None:
            await self._turn_done.wait()
        for tool in self._closeable_tools:  # unified exec: kill every live PTY session
            await tool.aclose()
        if self.recorder is not None:
            await self.recorder.aclose()
        if self.mcp is not None:
            await self.mcp.aclose()
        if self._environments_scope is not None:
            self._environments_scope.cancel()
        for stream in self._subscribers:
            stream.close()

    # --- events ------------------------------------------------------------------------------

    def subscribe(self) -> MemoryObjectReceiveStream[SessionEvent]:
        """A stream of every event from now on (unbounded buffer: read it)."""
        send, receive = anyio.create_memory_object_stream[SessionEvent](math.inf)
        self._subscribers.append(send)
        return receive

    def _emit(self, event: SessionEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)
        for stream in self._subscribers:
            try:
                stream.send_nowait(event)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    # --- turns -------------------------------------------------------------------------------

    @property
    def turn_active(self) -> bool:
        return self._active is not None

    def new_turn_context(
        self, turn_id: str | None = None, output_schema: dict[str, Any] | None = None
    ) -> TurnContext:
        return self.settings.turn_context(
            self.session_id,
            self.approvals,
            turn_id or str(uuid.uuid4()),
            output_schema,
            model=self.model,
            approval_policy=self.approval_policy,
            sandbox=self.sandbox,
            environments=self.selections.for_turn(self._warn),
        )

    async def run_turn(
        self,
        text: str | Sequence[ResponseItem],
        *,
        output_schema: dict[str, Any] | None = None,
        skills: Sequence[SkillSelection] = (),
    ) -> str | None:
        """Run one user turn to completion; returns the last agent message.

        Turns run one at a time: while another turn runs (or is finishing), this waits for it.
        ``output_schema`` (a JSON Schema) is sent with this turn's requests; ``skills`` are
        structured skill inputs (their ``SKILL.md`` is injected after the input).
        """
        await self._after_running_turn()
        claimed = self._claim_turn(text)
        return await self._run_turn(*claimed, output_schema=output_schema, skills=skills)

    async def _after_running_turn(self) -> None:
        """Wait for the running turn (or compaction) to finish; refused while shutting down."""
        while self._turn_done is not None and self._active is not None:
            await self._turn_done.wait()
        if self._closing:
            raise MiniCodexError("the session is shutting down")

    def _claim_turn(
        self, text: str | Sequence[ResponseItem]
    ) -> tuple[anyio.CancelScope, list[ResponseItem], str]:
        """Mark a turn active now, before its task runs, so submit/steer/interrupt see it.

        Input steered too late for the previous turn (after its last request, or before it was
        interrupted) is kept: it opens this turn, before the new input.
        """
        items = self.state.take_pending()
        items.extend([user_message(text)] if isinstance(text, str) else text)
        scope = anyio.CancelScope()
        self._active = scope
        self._active_turn_id = str(uuid.uuid4())
        self._turn_done = anyio.Event()
        return scope, items, self._active_turn_id

    async def _run_turn(
        self,
        scope: anyio.CancelScope,
        items: list[ResponseItem],
        turn_id: str,
        output_schema: dict[str, Any] | None = None,
        skills: Sequence[SkillSelection] = (),
    ) -> str | None:
        done = self._turn_done
        assert done is not None
        interrupted = True
        try:
            turn = self.new_turn_context(turn_id, output_schema)
            deps = self._deps()
            with scope:
                result = await run_turn(self.state, turn, items, deps, skills=skills)
                interrupted = False
                texts = [message_text(i) for i in items if isinstance(i, Message)]
                await self.hooks.turn_ended(turn_id, texts, result, self._tg)
                return result
            return None  # interrupted
        finally:
            self._active = None
            done.set()
            if self.state.pending_input and not interrupted and not self._closing:
                # Input steered after the turn's last request is answered by a follow-up turn
                # (after an interrupt it waits for the next turn instead).
                self._tg.start_soon(self._run_turn, *self._claim_turn([]))

    def _deps(self) -> TurnDeps:
        return TurnDeps(
            capture=lambda: self.capture,
            caches=self.caches,
            client=self.client,
            retry=self._retry,
            on_request=self.on_request,
            mcp=self.mcp,
        )

    async def compact(self) -> str | None:
        """Compact the history now (Codex ``Op::Compact``; the TUI's ``/compact``).

        Runs as a task of its own after the running turn (``task_started``, the summarizer's
        answer, ``compacted``, ``task_complete``); ``interrupt()`` cancels it, leaving history
        as it was. The initial context is not re-injected: the next turn records it in full
        (spec §8.4). Emits ``context_compacted`` and the long-threads warning; returns the
        summary, or None when the compaction failed (an ``error`` event says why).
        """
        await self._after_running_turn()
        scope = anyio.CancelScope()
        done = anyio.Event()
        self._active, self._active_turn_id, self._turn_done = scope, str(uuid.uuid4()), done
        try:
            with scope:
                turn = self.new_turn_context(self._active_turn_id)
                return await run_compact_task(self.state, turn, self._deps())
            return None  # interrupted
        finally:
            self._active = None
            done.set()

    def submit(self, text: str | Sequence[ResponseItem]) -> None:
        """Start a turn in the background, or steer the running turn with ``text`` (a message, or
        input items such as a message with images)."""
        if self._active is not None:
            if isinstance(text, str):
                self.steer(text)
            else:
                self.state.pending_input.extend(text)
        else:
            self._tg.start_soon(self._run_turn, *self._claim_turn(text))

    def steer(self, text: str, *, expected_turn_id: str | None = None) -> str:
        """Add ``text`` to the running turn's pending input; returns that turn's id.

        Refused (spec/codex-runtime.md §10 case 13) with ``NoActiveTurnError`` when no turn runs,
        ``ExpectedTurnMismatchError`` when ``expected_turn_id`` names another turn, and
        ``EmptyInputError`` for blank input.
        """
        if self._active is None:
            raise NoActiveTurnError("no active turn to steer")
        actual = self._active_turn_id
        if expected_turn_id is not None and expected_turn_id != actual:
            raise ExpectedTurnMismatchError(expected_turn_id, actual)
        if not text.strip():
            raise EmptyInputError("steering input is empty")
        self.state.pending_input.append(user_message(text))
        return actual

    def skill_names(self) -> list[str]:
        """Names of the skills of the latest turn (what ``$`` completes to in the UI)."""
        skills = self.caches.skills
        return list(dict.fromkeys(skills.names(self.cwd))) if skills is not None else []

    def interrupt(self) -> None:
        if self._active is not None:
            self._active.cancel()

    # --- checkpoints -------------------------------------------------------------------------

    async def _maybe_checkpoint(self) -> None:
        await checkpoint_if_due(self.recorder, self.history, self.state)
