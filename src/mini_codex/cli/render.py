"""Human rendering of session events (pure: event in, rich Text out; printing is the caller's)."""

from __future__ import annotations

import shlex

from rich.text import Text

from mini_codex import protocol
from mini_codex.protocol import session_events
from mini_codex.protocol.approvals import (
    ApplyPatchApprovalRequest,
    ExecApprovalRequest,
    SafetyDecision,
)
from mini_codex.protocol.session_events import SessionEvent

_MAX_TOOL_OUTPUT_LINES = 12


def _clip(text: str, lines: int = _MAX_TOOL_OUTPUT_LINES) -> str:
    parts = text.splitlines()
    if len(parts) <= lines:
        return text
    return "\n".join([*parts[:lines], f"… ({len(parts) - lines} more lines)"])


def render_event(event: SessionEvent) -> Text | None:
    """A line (or block) for the terminal, or None for events shown elsewhere (deltas)."""
    match event:
        case session_events.SessionConfigured():
            verb = "resumed" if event.resumed else "session"
            text = Text.assemble(
                (f"mini-codex {verb} ", "bold"),
                (event.session_id, "cyan"),
                f"  model {event.model}  cwd {event.cwd}",
            )
            if event.rollout_path:
                text.append(f"\nrollout: {event.rollout_path}", style="dim")
            return text
        case session_events.StepStarted():
            changed = (
                f" world state: {', '.join(event.world_state_changed)}"
                if (event.world_state_changed)
                else ""
            )
            return Text(f"── step {event.sequence} ({event.step_id[:8]}){changed}", style="dim")
        case session_events.ToolCallBegin():
            return Text.assemble(
                ("▶ ", "yellow"), (event.name, "bold yellow"), " ", _clip(event.payload, 6)
            )
        case session_events.ToolCallEnd():
            style = "red" if event.success is False else "green"
            return Text.assemble(
                ("◀ ", style),
                (f"{event.name} ({event.duration_s:.2f}s)\n", style),
                (_clip(event.output), "dim"),
            )
        case session_events.ItemCompleted():
            item = event.item
            if item.get("type") == "message" and item.get("role") == "assistant":
                parts = [p.get("text", "") for p in item.get("content", []) if isinstance(p, dict)]
                return Text("".join(parts), style="bold")
            return None
        case protocol.UserMessageEvent():
            return Text.assemble(("user: ", "bold blue"), event.message)
        case session_events.StreamErrorEvent():
            return Text(event.message, style="yellow")
        case session_events.ErrorEvent():
            return Text(f"error: {event.message}", style="bold red")
        case session_events.WarningEvent():
            return Text(f"warning: {event.message}", style="yellow")
        case session_events.ContextCompacted():
            return Text(
                f"context compacted ({event.trigger.replace('_', '-')}): "
                f"{event.tokens_before} → {event.tokens_after} tokens, "
                f"window {event.window_number}",
                style="cyan",
            )
        case protocol.TurnAborted():
            return Text("turn interrupted", style="bold red")
        case SafetyDecision(decision="reject" | "sandbox_denied" | "denied" | "abort"):
            # Why a command did not run (what ran is visible from its own output).
            what = shlex.join(event.command) if event.command else event.tool
            return Text(f"{event.source} {event.decision}: {what} ({event.reason})", style="yellow")
        case SafetyDecision() | ExecApprovalRequest() | ApplyPatchApprovalRequest():
            return None
        case protocol.TokenCount():
            info = event.info or {}
            total = info.get("turn_token_usage", {}).get("total_tokens")
            return Text(f"tokens: {total}", style="dim") if total is not None else None
        case (
            protocol.TaskStarted()
            | protocol.TaskComplete()
            | protocol.AgentMessageEvent()
            | session_events.AgentMessageDelta()
            | session_events.ReasoningDelta()
        ):
            return None
        case _:
            return None
