"""``mini-codex rollout replay|inspect|verify``: look at a rollout file from the command line.

Each command takes one path (a ``.jsonl`` or ``.jsonl.zst`` rollout, written by mini-codex or by
the Codex CLI). A file that cannot be read at all (missing, a directory, unreadable, empty, or of a
newer ``mini_codex_schema``) gives one ``error: ...`` line on stderr and a non-zero exit; bad lines
inside a readable file are counted and reported, never fatal.

Exit codes: 0 success; 1 the file could not be read (``replay``, ``inspect``) or breaks an
invariant (``verify``); 2 ``verify`` could not read the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, NoReturn

import orjson
import typer
from rich.console import Console

from mini_codex.cli.inspect_render import render_replay_summary, render_timeline
from mini_codex.cli.inspect_timeline import build_timeline
from mini_codex.cli.remote import local_copy
from mini_codex.errors import MiniCodexError
from mini_codex.protocol import CompactedLine, RolloutLine
from mini_codex.rollout import read_rollout, reconstruct, replay_file
from mini_codex.rollout.replay.checkpoint import CHECKPOINT_KEY
from mini_codex.rollout.replay.verify import check_rollout

__all__ = ["INVARIANTS", "rollout_app"]

INVARIANTS = ("I1", "I3", "I5", "I6")
"""The ordering invariants (DESIGN §5) that ``verify`` can check on a file."""

rollout_app = typer.Typer(
    name="rollout",
    help="Replay, inspect and verify rollout files (mini-codex's or the Codex CLI's).",
    no_args_is_help=True,
    add_completion=False,
)

PathArg = Annotated[
    Path,
    typer.Argument(
        help="A rollout file (.jsonl or .jsonl.zst), e.g. ~/.codex/sessions/.../rollout-*.jsonl.",
        show_default=False,
    ),
]


def _fail(error: Exception, code: int = 1) -> NoReturn:
    message = " ".join(str(error).split())  # always exactly one line
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@rollout_app.command("replay")
def replay_command(
    path: PathArg,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the reconstruction as one JSON object.")
    ] = False,
) -> None:
    """Reconstruct what a resumed session would start from (history, world state, window)."""
    try:
        result = replay_file(path)
    except MiniCodexError as error:
        _fail(error)
    if json_output:
        typer.echo(orjson.dumps(result.to_json()).decode())
        return
    Console(highlight=False).print(render_replay_summary(result, path))


@rollout_app.command("inspect")
def inspect_command(
    path: PathArg,
    events: Annotated[
        bool,
        typer.Option("--events", help="Show every event line (by default only turn frames)."),
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Write the browser inspector's view of the session as one self-contained file.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Show a timeline: turns, steps, items, world-state diffs, compactions and warnings."""
    if html is not None:
        _write_html(path, html)
        return
    try:
        rollout = read_rollout(path)
    except MiniCodexError as error:
        _fail(error)
    timeline = build_timeline(
        rollout.lines,
        rollout.line_numbers,
        rollout.stats,
        warnings=rollout.warnings,
        show_events=events,
    )
    result = reconstruct(rollout.lines, rollout.stats)
    Console(highlight=False).print(render_timeline(timeline, path, result))


def _write_html(path: Path, out: Path) -> None:
    from mini_codex.web.export import export_html

    try:
        page = export_html(path)
    except MiniCodexError as error:
        _fail(error)
    except OSError as error:
        _fail(MiniCodexError(f"cannot read {path}: {error.strerror or error}"))
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as error:
        _fail(MiniCodexError(f"cannot write {out}: {error.strerror or error}"))
    typer.echo(f"wrote {out} ({len(page.encode())} bytes)")


@rollout_app.command("verify")
def verify_command(
    target: Annotated[
        str,
        typer.Argument(
            help="A rollout file (.jsonl or .jsonl.zst), or its URL (s3://…, file://…).",
            show_default=False,
        ),
    ],
) -> None:
    """Check the ordering invariants I1, I3, I5 and I6; exit 1 naming the first violating line."""
    try:
        with local_copy(target) as local:
            rollout = read_rollout(local)
    except MiniCodexError as error:
        _fail(error, code=2)
    path = local if "://" not in target else target
    result = check_rollout(rollout.lines, line_numbers=rollout.line_numbers)
    for warning in rollout.warnings:
        typer.echo(f"{path}: warning: {warning}", err=True)
    if result.violations:
        for found in result.violations:
            typer.echo(f"{path}:{found.line_number}: {found.invariant}: {found.message}")
        broken = sorted({violation.invariant for violation in result.violations})
        typer.echo(
            f"{len(result.violations)} violation(s) of {' '.join(broken)} "
            f"in {rollout.stats.lines} lines",
            err=True,
        )
        raise typer.Exit(1)
    bad = rollout.stats.bad_lines
    skipped = f" ({bad} bad line{'s' if bad != 1 else ''} skipped)" if bad else ""
    typer.echo(
        f"ok: {rollout.stats.lines} lines, invariants {' '.join(INVARIANTS)} hold{skipped}"
        f"{_compactions(rollout.lines)}"
    )


def _compactions(lines: Sequence[RolloutLine]) -> str:
    """``; N compaction(s), M checkpoint(s)`` when the file has any (else empty)."""
    compacted = [line for line in lines if isinstance(line, CompactedLine)]
    checkpoints = sum(1 for line in compacted if CHECKPOINT_KEY in (line.payload.model_extra or {}))
    real = len(compacted) - checkpoints
    parts = [f"{real} compaction(s)"] if real else []
    if checkpoints:
        parts.append(f"{checkpoints} checkpoint(s)")
    return "; " + ", ".join(parts) if parts else ""
