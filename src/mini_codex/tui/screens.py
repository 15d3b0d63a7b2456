"""Overlays: the approval request (answered with one key) and the resume picker."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ApprovalAnswer,
    ApprovalRequest,
    ExecApprovalRequest,
)
from mini_codex.tui.cells import patch_text

if TYPE_CHECKING:  # the session index (sqlite3): only the picker's caller needs it
    from mini_codex.rollout.index import SessionInfo

APPROVAL_KEYS = "[y] approve once  [a] approve for session  [n] deny  [esc] deny and stop"


def approval_body(request: ApprovalRequest, patch: str | None) -> Text:
    text = Text()
    match request:
        case ExecApprovalRequest():
            where = " outside the sandbox" if request.escalated else ""
            text.append(f"Run this command{where}?\n", style="bold")
            text.append(f"$ {shlex.join(request.command)}\n", style="bold yellow")
            text.append(f"cwd: {request.cwd}\n", style="dim")
        case ApplyPatchApprovalRequest():
            text.append("Apply this patch?\n", style="bold")
            if patch:
                text.append_text(patch_text(patch))
                text.append("\n")
            else:
                for path, kind in request.changes.items():
                    text.append(f"  {kind} {path}\n")
    if request.reason:
        text.append(f"reason: {request.reason}\n", style="italic")
    text.append(APPROVAL_KEYS, style="bold cyan")
    return text


class ApprovalScreen(ModalScreen[ApprovalAnswer]):
    DEFAULT_CSS = """
    ApprovalScreen { align: center bottom; }
    ApprovalScreen > Vertical {
        dock: bottom; width: 100%; height: auto; max-height: 90%;
        border: round $warning; padding: 0 1; background: $surface;
    }
    """
    BINDINGS = [  # noqa: RUF012 (Textual's class-level binding table)
        Binding("y", "answer('approved')", "approve once"),
        Binding("a", "answer('approved_for_session')", "approve for session"),
        Binding("n", "answer('denied')", "deny"),
        Binding("escape", "answer('abort')", "deny and stop"),
    ]

    def __init__(self, request: ApprovalRequest, patch: str | None = None) -> None:
        super().__init__()
        self.request = request
        self.patch = patch

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(approval_body(self.request, self.patch), id="approval-body")

    def action_answer(self, decision: str) -> None:
        match decision:
            case "approved" | "approved_for_session" | "denied" | "abort":
                self.dismiss(ApprovalAnswer(decision=decision))


def session_label(info: SessionInfo, home: Path | None = None) -> Text:
    when = _short_time(info.updated or info.created)
    cwd = info.cwd or "?"
    if home is not None and cwd.startswith(str(home)):
        cwd = "~" + cwd[len(str(home)) :]
    prompt = " ".join((info.first_user_message or "(no prompt)").split())
    if len(prompt) > 60:
        prompt = prompt[:59] + "…"
    return Text.assemble((when, "cyan"), "  ", (cwd, "dim"), "  ", prompt)


def _short_time(stamp: str | None) -> str:
    if not stamp:
        return "????-??-?? ??:??"
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp[:16]
    return moment.strftime("%Y-%m-%d %H:%M")


class ResumePicker(ModalScreen[Path | None]):
    """Recent sessions, newest first; Enter resumes one, Esc cancels (None)."""

    DEFAULT_CSS = """
    ResumePicker { align: center top; }
    ResumePicker > Vertical { width: 100%; height: auto; max-height: 100%; border: round $accent; }
    ResumePicker OptionList { height: auto; max-height: 16; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel")]  # noqa: RUF012

    def __init__(self, sessions: Sequence[SessionInfo], home: Path | None = None) -> None:
        super().__init__()
        self.sessions = list(sessions)
        self.home = home

    def compose(self) -> ComposeResult:
        with Vertical():
            title = "Resume a session (Enter resumes, Esc cancels)"
            if not self.sessions:
                title = "No recorded sessions (Esc starts a new one)"
            yield Static(Text(title, style="bold"))
            yield OptionList(
                *[
                    Option(session_label(info, self.home), id=str(info.path))
                    for info in self.sessions
                ],
                id="sessions",
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.dismiss(Path(event.option.id))

    def action_cancel(self) -> None:
        self.dismiss(None)
