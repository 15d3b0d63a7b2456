"""Session events → the app: each event of the open session becomes a change to the transcript,
the status line or the queue of the app (``app.py``).

This is the only module of the UI that needs the protocol's event classes at run time (pydantic
models, a few hundred milliseconds to import): the app loads it when the first event arrives,
after its first frame, so the composer is on the screen before any of them is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rich.text import Text
from textual.widgets import Static

from mini_codex.protocol import TokenCount, TurnAborted, UserMessageEvent
from mini_codex.protocol.approvals import SafetyDecision
from mini_codex.protocol.events import TaskComplete, TaskStarted
from mini_codex.protocol.session_events import (
    AgentMessageDelta,
    ErrorEvent,
    ExecCommandOutputDelta,
    ItemCompleted,
    SessionConfigured,
    SessionEvent,
    StepStarted,
    StreamErrorEvent,
    ToolCallBegin,
    ToolCallEnd,
    WarningEvent,
)
from mini_codex.tui import cells

if TYPE_CHECKING:
    from mini_codex.host import Session
    from mini_codex.tui.transcript import Transcript

__all__ = ["EventTarget", "handle_event"]


class EventTarget(Protocol):
    """What the events change: the app (``MiniCodexApp``)."""

    session: Session | None
    token_info: dict[str, object] | None
    turn_running: bool
    queued: list[str]
    chips_for: dict[str, list[str]]
    last_session_id: str

    @property
    def transcript(self) -> Transcript: ...

    def note(self, text: Text | str) -> None: ...

    def refresh_status(self) -> None: ...

    def refresh_queued(self) -> None: ...


def handle_event(app: EventTarget, event: SessionEvent) -> None:
    match event:
        case AgentMessageDelta():
            app.transcript.stream_delta(event.delta)
        case ItemCompleted():
            app.transcript.item_completed(event.item)
        case UserMessageEvent():
            _user_message(app, event.message)
        case ToolCallBegin():
            app.transcript.tool_begin(event)
        case ExecCommandOutputDelta():
            app.transcript.tool_output(event)
        case ToolCallEnd():
            app.transcript.tool_end(event)
        case StepStarted():
            _step_started(app)
        case TokenCount():
            app.token_info = event.info
            app.refresh_status()
        case TaskStarted():
            app.turn_running = True
            app.refresh_status()
        case TaskComplete():
            _turn_ended(app)
        case TurnAborted():
            app.transcript.finish_stream()
            app.note(Text("■ turn interrupted", style="bold red"))
            _turn_ended(app)
        case ErrorEvent():
            app.transcript.finish_stream()
            app.transcript.error(event.message, cells.next_step_for(event.message))
        case StreamErrorEvent() | WarningEvent():
            app.note(Text(event.message, style="yellow"))
        case SafetyDecision(decision="reject" | "sandbox_denied" | "denied" | "abort"):
            what = " ".join(event.command) if event.command else event.tool
            app.note(Text(f"{event.decision}: {what}", style="yellow"))
        case SessionConfigured():
            verb = "resumed session" if event.resumed else "new session"
            short = event.session_id[:8]
            app.note(Text(f"{verb} {short}… · {event.cwd}", style="dim"))
            app.transcript.workspace(None)
            app.last_session_id = event.session_id
        case _:
            pass


def _user_message(app: EventTarget, message: str) -> None:
    if message in app.queued:
        app.queued.remove(message)
        app.refresh_queued()
    chips = app.chips_for.pop(message, [])
    app.transcript.add_cell(Static(cells.user_text_with_images(message, chips)))


def _turn_ended(app: EventTarget) -> None:
    app.transcript.finish_stream()
    app.turn_running = False
    app.refresh_status()


def _step_started(app: EventTarget) -> None:
    session = app.session
    baseline = session.history.world_state_baseline if session is not None else None
    workspace = baseline.to_json().get("workspace") if baseline is not None else None
    files = workspace.get("files") if isinstance(workspace, dict) else None
    if isinstance(files, dict):
        app.transcript.workspace(set(files))
