"""Rendering for ``rollout inspect`` and ``rollout replay`` (pure: values in, rich renderables out).

What belongs here: turning a :class:`~mini_codex.cli.inspect_timeline.Timeline` and a
:class:`~mini_codex.rollout.replay.Reconstructed` into rich ``Text`` lines. Every line is one
``Text`` with ``no_wrap`` and an ellipsis, so output never wraps and a narrow terminal only cuts
previews. Printing is the caller's (tests inject ``Console(file=io.StringIO(), width=100)``).
What does not: reading files, grouping lines (``inspect_timeline.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich.console import Group
from rich.text import Text

from mini_codex.cli.inspect_timeline import Row, Timeline, TimelineTurn
from mini_codex.protocol import SessionMeta
from mini_codex.rollout.replay import Reconstructed
from mini_codex.rollout.replay.lines import ReadStats
from mini_codex.world_state import format_model_visible_layout

__all__ = ["LAYOUT_LINES", "render_replay_summary", "render_timeline"]

LABEL_WIDTH = 16
LAYOUT_LINES = 40
"""Model-visible layout lines shown by the replay summary (the newest ones)."""

_STYLES = {
    "user": "bold blue",
    "assistant": "bold",
    "context": "dim",
    "reasoning": "dim italic",
    "call": "yellow",
    "output": "green",
    "item": "",
    "turn_context": "cyan",
    "world_state": "magenta",
    "compaction": "bold cyan",
    "checkpoint": "bold cyan",
    "rollback": "bold red",
    "event": "dim",
    "meta": "dim",
    "unknown": "dim",
}


def _line(*parts: str | tuple[str, str]) -> Text:
    return Text.assemble(*parts, no_wrap=True, overflow="ellipsis")


def _meta_line(meta: SessionMeta | None, label: str = "session  ") -> Text:
    if meta is None:
        return _line((label, "bold"), ("no session_meta line", "yellow"))
    parts = [meta.thread_id]
    if meta.cwd:
        parts.append(f"cwd {meta.cwd}")
    origin = " ".join(value for value in (meta.originator, meta.cli_version) if value)
    if origin:
        parts.append(origin)
    if meta.timestamp:
        parts.append(f"created {meta.timestamp}")
    if meta.mini_codex_schema is not None:
        parts.append(f"mini-codex schema {meta.mini_codex_schema}")
    return _line((label, "bold"), " · ".join(parts))


def _stats_text(stats: ReadStats) -> str:
    return f"{stats.lines} lines · {stats.bad_lines} bad · {stats.unknown_items} of unknown kinds"


def _row(row: Row, indent: str) -> Iterable[Text]:
    style = "bold red" if row.flagged else _STYLES.get(row.kind, "")
    number = f"L{row.line}".rjust(6)
    yield _line(
        indent,
        (number, "dim"),
        "  ",
        (row.label.ljust(LABEL_WIDTH), style),
        " ",
        row.text,
    )
    pad = indent + " " * (6 + 2 + LABEL_WIDTH + 1)
    for detail in row.details:
        yield _line(pad, (detail, "red" if row.flagged else "magenta"))


def is_compaction_task(turn: TimelineTurn) -> bool:
    """A task without user input that wrote a ``compacted`` line: a manual compaction, shown and
    counted as such rather than as a turn (the session index does not count it either)."""
    return not turn.user_turn and any(
        row.label == "compacted" for step in turn.steps for row in step.rows
    )


def _turn(turn: TimelineTurn) -> Iterable[Text]:
    compaction = is_compaction_task(turn)
    header = ["compaction (no user input)" if compaction else f"turn {turn.number}"]
    if turn.turn_id:
        header.append(f"id {turn.turn_id}")
    header.append(f"{turn.opened_by} L{turn.line}")
    if not compaction:
        header.append(f"{len(turn.steps)} step{'s' if len(turn.steps) != 1 else ''}")
    if turn.status == "open":
        header.append("not closed")
    style = "bold"
    if turn.rolled_back_at is not None:
        header.append(f"rolled back at L{turn.rolled_back_at}")
        style = "bold red"
    yield _line(("▸ " + " · ".join(header), style))
    for row in turn.rows:
        yield from _row(row, "  ")
    for step in turn.steps:
        if compaction:
            yield _line(("  summary request", "dim"), (f" · L{step.line}", "dim"))
        else:
            yield _line(
                ("  step ", "dim"), (f"{step.number}", "bold dim"), (f" · L{step.line}", "dim")
            )
        for row in step.rows:
            yield from _row(row, "  ")
    if turn.end is not None:
        end = turn.end
        text = end.text
        if turn.hidden_events:
            text = f"{text} · {_events(turn.hidden_events)} not shown".lstrip(" ·")
        style = "red" if turn.status == "aborted" else "green"
        yield _line(
            "  ",
            (f"L{end.line}".rjust(6), "dim"),
            "  ",
            (end.label.ljust(LABEL_WIDTH), style),
            " ",
            (text, "dim"),
        )
    elif turn.hidden_events:
        yield _line(("  " + " " * 8 + f"{_events(turn.hidden_events)} not shown", "dim"))


def _events(count: int) -> str:
    return f"{count} event{'s' if count != 1 else ''}"


def render_timeline(
    timeline: Timeline, path: Path | str, result: Reconstructed | None = None
) -> Group:
    """The whole inspect output: header, blocks in file order, replay result and warnings."""
    lines: list[Text] = [
        _line(("rollout  ", "bold"), str(path)),
        _meta_line(timeline.session_meta),
    ]
    turns = timeline.turns
    how = " (derived from user input: no task events)" if timeline.by_user_input and turns else ""
    compactions = sum(1 for turn in turns if is_compaction_task(turn))
    user_turns = len(turns) - compactions
    counted = f"{user_turns} turn{'s' if user_turns != 1 else ''}"
    if compactions:
        counted += f" · {compactions} manual compaction{'s' if compactions != 1 else ''}"
    lines.append(_line(("lines    ", "bold"), f"{_stats_text(timeline.stats)} · {counted}{how}"))
    lines.append(_line(""))
    for block in timeline.blocks:
        if isinstance(block, TimelineTurn):
            lines.extend(_turn(block))
        else:
            lines.extend(_row(block, ""))
    if timeline.hidden_events:
        hidden = _events(timeline.hidden_events)
        lines.append(_line((f"{hidden} outside turns not shown", "dim")))
    if result is not None:
        lines.append(_line(""))
        lines.append(_line(("replay   ", "bold"), _result_text(result)))
    warnings = [*timeline.warnings]
    if result is not None:
        warnings.extend(f"replay: {warning}" for warning in result.warnings)
    if warnings:
        lines.append(_line(""))
        lines.append(_line((f"warnings ({len(warnings)})", "bold yellow")))
        lines.extend(_line("  ", (warning, "yellow")) for warning in warnings)
    return Group(*lines)


def _result_text(result: Reconstructed) -> str:
    sections = ", ".join(result.world_state) if result.world_state is not None else "none"
    window = result.window
    parts = [
        f"history {len(result.history)} items",
        f"world state: {sections}",
        f"window {window.number}",
    ]
    settings = result.previous_turn_settings
    if settings is not None and settings.model:
        parts.append(f"previous model {settings.model}")
    return " · ".join(parts)


def render_replay_summary(result: Reconstructed, path: Path | str) -> Group:
    """The human output of ``rollout replay``: what a resumed session would start from."""
    lines: list[Text] = [
        _line(("rollout            ", "bold"), str(path)),
        _meta_line(result.session_meta, "session            "),
        _line(("stats              ", "bold"), _stats_text(result.stats)),
        _line(("history            ", "bold"), f"{len(result.history)} items"),
    ]
    layout = format_model_visible_layout(result.history)
    if len(layout) > LAYOUT_LINES:
        hidden = len(layout) - LAYOUT_LINES
        lines.append(_line(("  … ", "dim"), (f"{hidden} earlier layout lines", "dim")))
        layout = layout[-LAYOUT_LINES:]
    lines.extend(_line("  ", (entry, "dim")) for entry in layout)
    state = result.world_state
    if state is None:
        lines.append(_line(("world state        ", "bold"), "none (the next update is full)"))
    else:
        count = f"{len(state)} section{'s' if len(state) != 1 else ''}"
        lines.append(_line(("world state        ", "bold"), count))
        for section, value in state.items():
            size = len(value) if isinstance(value, dict | list) else 1
            lines.append(_line("  ", (section, "magenta"), f" ({size} keys)" if size != 1 else ""))
    context = result.reference_context
    if context is None:
        lines.append(_line(("reference context  ", "bold"), "none"))
    else:
        parts = [f"model {context.model or '-'}", f"cwd {context.cwd or '-'}"]
        if context.turn_id:
            parts.append(f"turn {context.turn_id}")
        lines.append(_line(("reference context  ", "bold"), " · ".join(parts)))
    settings = result.previous_turn_settings
    lines.append(
        _line(
            ("previous model     ", "bold"),
            settings.model or "-" if settings is not None else "none",
        )
    )
    window = result.window
    lines.append(_line(("window             ", "bold"), f"number {window.number}"))
    for name, value in (
        ("first", window.first_id),
        ("previous", window.previous_id),
        ("current", window.current_id),
    ):
        if value is not None:
            lines.append(_line("  ", (f"{name} id ", "dim"), value))
    if result.warnings:
        lines.append(_line((f"warnings ({len(result.warnings)})", "bold yellow")))
        lines.extend(_line("  ", (warning, "yellow")) for warning in result.warnings)
    else:
        lines.append(_line(("warnings           ", "bold"), "none"))
    return Group(*lines)
