"""The facts the session index keeps of one rollout file (``SessionInfo``), pulled out with one
forward read (``extract_facts``); see ``rollout/index.py`` for what each fact means."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mini_codex.errors import RolloutError
from mini_codex.protocol import (
    EventMsgLine,
    Message,
    ResponseItemLine,
    TaskStarted,
    TurnContextLine,
    UserMessageEvent,
    message_text,
)
from mini_codex.rollout.paths import parse_rollout_filename
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.entries import is_user_turn_boundary

__all__ = ["SessionInfo", "extract_facts"]

_FIRST_MESSAGE_MAX = 2000  # characters kept of the first user message


@dataclass(frozen=True)
class SessionInfo:
    """One indexed session (one rollout file)."""

    id: str
    path: Path
    cwd: str | None
    created: str | None
    """UTC ``...Z`` timestamp as written in the file."""
    updated: str | None
    """Timestamp of the file's last line."""
    first_user_message: str | None
    turn_count: int
    size: int
    mtime_ns: int
    error: str | None = None
    """Why the file could not be read (then only id, path, size and mtime are known)."""
    parent_thread_id: str | None = None
    """The thread that spawned this one (a sub-agent's ``session_meta``, ours or Codex's)."""
    agent_nickname: str | None = None


def extract_facts(path: Path, size: int, mtime_ns: int) -> SessionInfo:
    parsed = parse_rollout_filename(path.name)
    fallback_id = parsed.thread_id if parsed is not None else path.name
    try:
        rollout = read_rollout(path)
    except RolloutError as exc:
        return SessionInfo(fallback_id, path, None, None, None, None, 0, size, mtime_ns, str(exc))
    meta = rollout.session_meta
    cwd = meta.cwd if meta is not None else None
    extra = (meta.model_extra or {}) if meta is not None else {}
    parent, nickname = extra.get("parent_thread_id"), extra.get("agent_nickname")
    created = meta.timestamp if meta is not None else None
    first_message: str | None = None
    first_event: str | None = None
    task_started = tasks_with_input = user_events = boundaries = 0
    task_has_input = False
    for line in rollout.lines:
        match line:
            case EventMsgLine(payload=TaskStarted()):
                tasks_with_input += task_has_input
                task_started += 1
                task_has_input = False
            case EventMsgLine(payload=UserMessageEvent(message=event_text)):
                user_events += 1
                task_has_input = True
                first_event = first_event if first_event is not None else event_text
            case ResponseItemLine(payload=Message() as item) if is_user_turn_boundary(item):
                boundaries += 1
                task_has_input = True
                first_message = first_message if first_message is not None else message_text(item)
            case TurnContextLine(payload=context) if cwd is None:
                cwd = context.cwd
            case _:
                pass
    timestamps = [line.timestamp for line in rollout.lines if line.timestamp]
    if created is None and timestamps:
        created = timestamps[0]
    text = first_message if first_message is not None else first_event
    return SessionInfo(
        id=rollout.thread_id or fallback_id,
        path=path,
        cwd=cwd,
        created=created,
        updated=timestamps[-1] if timestamps else created,
        first_user_message=text[:_FIRST_MESSAGE_MAX] if text is not None else None,
        parent_thread_id=parent if isinstance(parent, str) else None,
        agent_nickname=nickname if isinstance(nickname, str) else None,
        turn_count=(tasks_with_input + task_has_input)
        if task_started
        else (user_events or boundaries),
        size=size,
        mtime_ns=mtime_ns,
    )
