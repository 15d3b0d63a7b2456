"""``mini-codex compact [--last | SESSION_ID | PATH]``: compact a recorded session's history now.

The session is resumed exactly as ``mini-codex resume`` would (same options), then compacted with
``Session.compact()`` instead of running a turn: the summarization request is sent, the
``compacted`` line is appended and the next ``resume`` starts from the summary (spec §8.2
"manual"). Exit status 0 when it compacted, 1 when the compaction failed (the error is printed).
"""

from __future__ import annotations

from typing import Annotated

import typer

from mini_codex.cli.exec_extras import ExecExtras, ProfileOpt, json_format
from mini_codex.cli.run import (
    ApprovalOpt,
    CdOpt,
    ConfigOpt,
    JsonOpt,
    ModelOpt,
    SandboxOpt,
    TraceOpt,
    exit_with,
    find_rollout,
    latest_rollout,
    run_session,
)
from mini_codex.errors import MiniCodexError


def compact_command(
    target: Annotated[
        str | None, typer.Argument(help="Session id (or prefix) or rollout PATH.")
    ] = None,
    last: Annotated[bool, typer.Option("--last", help="Compact the most recent session.")] = False,
    model: ModelOpt = None,
    cd: CdOpt = None,
    sandbox: SandboxOpt = None,
    ask_for_approval: ApprovalOpt = None,
    json_: JsonOpt = False,
    trace_requests: TraceOpt = None,
    config: ConfigOpt = None,
    profile: ProfileOpt = None,
) -> None:
    """Summarize a recorded session's history and continue it from the summary."""

    def run() -> int:
        if last:
            if target is not None:
                raise MiniCodexError("give a SESSION_ID or PATH, or --last, not both")
            path = latest_rollout(cd)
        elif target is None:
            raise MiniCodexError("give a SESSION_ID or PATH, or --last")
        else:
            path = find_rollout(target)
        extras = ExecExtras(json_format=json_format(json_, None), profile=profile)
        return run_session(
            "",
            model=model,
            cd=cd,
            sandbox=sandbox,
            as_json=json_,
            trace_requests=trace_requests,
            overrides=config or [],
            resume_path=path,
            extras=extras,
            approval=ask_for_approval,
            action=lambda session: session.compact(),
        )

    exit_with(run)
