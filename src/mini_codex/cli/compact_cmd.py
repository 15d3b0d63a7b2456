"""``mini-codex compact [--last | SESSION_ID | PATH]``: compact a recorded session's history now.

The session is resumed exactly as ``mini-codex resume`` would, with the same options
(``resume_cmd.SessionArgs``, one declaration for both), then compacted with ``Session.compact()``
instead of running a turn: the summarization request is sent, the ``compacted`` line is appended
and the next ``resume`` starts from the summary (spec §8.2 "manual"). Exit status 0 when it
compacted, 1 when the compaction failed (the error is printed).

What the options mean here: ``--model`` / ``--oss`` choose the summarizer; ``-o FILE`` writes the
summary (the compaction's "last message"); ``--json`` / ``--json-events`` stream the events. A
prompt, ``--image`` and ``--output-schema`` describe a turn's input or final answer, which a
compaction has not: each is refused with a one-line error before anything is opened.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from msgspec.structs import replace

from mini_codex.cli.exec_extras import write_last_message
from mini_codex.cli.resume_cmd import SessionArgs, session_command
from mini_codex.errors import MiniCodexError

if TYPE_CHECKING:
    from mini_codex.host import Session

__all__ = ["compact_command"]


def _refuse_turn_options(args: SessionArgs) -> None:
    if args.image:
        raise MiniCodexError("--image does not apply to compact (a compaction has no prompt)")
    if args.output_schema is not None:
        raise MiniCodexError(
            "--output-schema does not apply to compact (a compaction has no final message)"
        )


def _compact(args: SessionArgs) -> int:
    """Summarize a recorded session's history and continue it from the summary."""
    _refuse_turn_options(args)
    if args.last and args.target is not None:
        raise MiniCodexError("give a SESSION_ID or PATH, or --last, not both")
    path, _ = args.session_and_prompt()
    extras = args.extras()
    summary_file = extras.output_last_message
    summaries: list[str | None] = []

    async def compact(session: Session) -> None:
        summaries.append(await session.compact())

    code = args.run(path, "", extras=replace(extras, output_last_message=None), action=compact)
    if summary_file is not None and summaries and summaries[0] is not None:
        write_last_message(summary_file, summaries[0], sys.stderr)
    return code


compact_command = session_command(
    _compact,
    without=("prompt",),
    helps={
        "last": "Compact the most recent session (of this directory, else any).",
        "model": "The summarizer model, or scripted:PATH for a script file.",
        "output_last_message": "Write the summary to FILE.",
        "output_schema": "Refused: a compaction has no final message to check.",
        "image": "Refused: a compaction has no prompt to attach it to.",
    },
)
