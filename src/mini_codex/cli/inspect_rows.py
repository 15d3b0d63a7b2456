"""What the ``rollout inspect`` timeline is made of: turns, steps and one-line rows (plain data,
built by ``inspect_timeline.py``, drawn by ``inspect_render.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from mini_codex.cli.inspect_preview import (
    RowKind,
)
from mini_codex.protocol import (
    SessionMeta,
)
from mini_codex.rollout.replay.forward import TurnSegment
from mini_codex.rollout.replay.lines import ReadStats

__all__ = ["Row", "RowKind", "Step", "Timeline", "TimelineTurn"]


@dataclass(frozen=True)
class Row:
    """One rollout line, previewed."""

    line: int
    kind: RowKind
    label: str
    text: str = ""
    details: tuple[str, ...] = ()
    """Sub-lines (world-state changes)."""
    flagged: bool = False
    """Something replay ignores or warns about (shown highlighted)."""


@dataclass
class Step:
    number: int
    line: int
    rows: list[Row] = field(default_factory=list)
    has_output: bool = False
    after_tool_output: bool = False


@dataclass
class TimelineTurn:
    number: int
    line: int
    turn_id: str | None
    opened_by: Literal["task_started", "user input"]
    rows: list[Row] = field(default_factory=list)
    """Rows before the first step (user input, context update)."""
    steps: list[Step] = field(default_factory=list)
    end: Row | None = None
    """The ``task_complete`` / ``turn_aborted`` row, if the turn was closed by one."""
    status: Literal["open", "complete", "aborted"] = "open"
    user_turn: bool = False
    rolled_back_at: int | None = None
    """Line of the rollback marker that discards this turn."""
    hidden_events: int = 0
    segment: TurnSegment | None = field(default=None, repr=False, compare=False)
    """Its segment in the forward replay, which decides ``user_turn`` and ``rolled_back_at``."""

    @property
    def has_output(self) -> bool:
        return any(step.has_output for step in self.steps)


Block: TypeAlias = Row | TimelineTurn


@dataclass
class Timeline:
    session_meta: SessionMeta | None
    stats: ReadStats
    blocks: list[Block] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Reader warnings (bad lines) then inspection findings, each naming its line."""
    hidden_events: int = 0
    """Events outside turns that were not shown as rows."""
    by_user_input: bool = False
    """True when the file has no task events and turns were derived from user input."""

    @property
    def turns(self) -> list[TimelineTurn]:
        return [block for block in self.blocks if isinstance(block, TimelineTurn)]
