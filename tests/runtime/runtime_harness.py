"""Helpers for the runtime tests: a real Session over a ``ScriptedModel`` in temporary dirs, small
test tools that log what they saw, and compact views of prompts and rollouts so tests can compare
whole sequences (``assert describe_rollout(...) == [...]``).

The scripted model is the only fake: files, the rollout recorder, the workspace scanner and the
tools are real.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio

from mini_codex.config import Config
from mini_codex.host import Session, SessionOptions, open_options
from mini_codex.host.assemble import default_tools
from mini_codex.models.base import Prompt
from mini_codex.protocol import (
    CompactedLine,
    EventMsgLine,
    ResponseItem,
    ResponseItemLine,
    RolloutLine,
    SessionMetaLine,
    TurnContextLine,
    WorldStateLine,
)
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.runtime.capture import CaptureProbe
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.testing import ScriptedModel, ScriptStep
from mini_codex.tools.base import Tool, ToolContext, ToolOutput, ToolSpec
from mini_codex.world_state import format_model_visible_layout

ENV = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")}

E = TypeVar("E")


@dataclass
class Run:
    """One open session and everything observable about it."""

    session: Session
    model: ScriptedModel
    events: list[SessionEvent]
    cwd: Path
    home: Path

    @property
    def prompts(self) -> list[Prompt]:
        return self.model.prompts

    def events_of(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]

    def rollout(self) -> list[RolloutLine]:
        assert self.session.rollout_path is not None
        return list(read_rollout(self.session.rollout_path).lines)


@asynccontextmanager
async def open_session(
    tmp_path: Path,
    script: Sequence[ScriptStep],
    *,
    tools: Sequence[Tool] | None = None,
    probe: CaptureProbe | None = None,
    resume_path: Path | None = None,
    sandbox: SandboxPolicy | None = None,
    config: Config | None = None,
    on_event: Callable[[SessionEvent], None] | None = None,
) -> AsyncIterator[Run]:
    """A persisted session in ``tmp_path/work`` with its home in ``tmp_path/home``.

    ``tools`` replaces the built-in tools (``None`` keeps shell, apply_patch and update_plan);
    ``on_event`` is called after each event is appended to ``Run.events``.
    """
    cwd = tmp_path / "work"
    home = tmp_path / "home"
    cwd.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    model = ScriptedModel(script)
    events: list[SessionEvent] = []

    def record(event: SessionEvent) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    options = SessionOptions(
        cwd=cwd,
        home=home,
        client=model,
        config=config or Config(),
        sandbox=sandbox,
        env=ENV,
        resume_path=resume_path,
        on_event=record,
        tools=None if tools is None else [RegisteredTool(tool) for tool in tools],
        capture_probe=probe,
    )
    async with open_options(options) as session:
        yield Run(session, model, events, cwd.resolve(), home)


def builtin_tools(config: Config | None = None) -> list[Tool]:
    return [entry.tool for entry in default_tools(config or Config())]


# --- views for whole-object comparisons ------------------------------------------------------


def item_line(item: ResponseItem) -> str:
    """The model-visible layout of one item, without its index; parts joined by `` | ``."""
    lines = format_model_visible_layout([item])
    head = lines[0].split(":", 1)[1]
    parts = [line.strip() for line in lines[1:]]
    return " | ".join([head, *parts]) if parts else head


def layout(items: Sequence[ResponseItem]) -> list[str]:
    return [item_line(item) for item in items]


def describe_line(line: RolloutLine) -> str:
    match line:
        case SessionMetaLine():
            return "session_meta"
        case ResponseItemLine(payload=item):
            return "item " + item_line(item)
        case WorldStateLine(payload=payload):
            if payload.full:
                return "world_state full"
            return "world_state patch " + ",".join(sorted(payload.state))
        case TurnContextLine():
            return "turn_context"
        case EventMsgLine(payload=event):
            return "event " + str(event.to_json()["type"])
        case CompactedLine():
            return "compacted"
        case _:
            return "unknown " + str(line.to_json().get("type"))


def describe_rollout(lines: Sequence[RolloutLine]) -> list[str]:
    return [describe_line(line) for line in lines]


# --- test tools ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """What one call of a test tool saw: when it ran and on which step."""

    tool: str
    call_id: str
    step_id: str
    start: float
    end: float


def overlaps(a: Interval, b: Interval) -> bool:
    return a.start < b.end and b.start < a.end


@dataclass
class SleepTool:
    """Sleeps ``{"seconds": x}`` (default ``delay``), then answers ``"<name> done"``.

    Every finished call is appended to ``log``; ``started`` is set when a call begins (and
    ``on_start``, if any, is awaited then), ``finished`` when one ends.
    """

    name: str
    parallel: bool = False
    delay: float = 0.0
    log: list[Interval] = field(default_factory=list)
    started: anyio.Event = field(default_factory=anyio.Event)
    finished: anyio.Event = field(default_factory=anyio.Event)
    on_start: Callable[[ToolContext], Awaitable[None]] | None = None
    description: str = "a test tool that sleeps"

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=self.description,
            kind="function",
            parameters={"type": "object", "properties": {"seconds": {"type": "number"}}},
            supports_parallel=self.parallel,
        )

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args: dict[str, Any] = json.loads(payload) if payload.strip() else {}
        seconds = float(args.get("seconds", self.delay))
        start = time.monotonic()
        self.started.set()
        if self.on_start is not None:
            await self.on_start(ctx)
        await anyio.sleep(seconds)
        self.log.append(Interval(self.name, ctx.call_id, ctx.step_id, start, time.monotonic()))
        self.finished.set()
        return ToolOutput(text=f"{self.name} done", success=True)
