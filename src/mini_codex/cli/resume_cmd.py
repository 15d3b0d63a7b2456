"""``mini-codex resume``, and the arguments it shares with ``mini-codex compact``.

What belongs here: :class:`SessionArgs`, the one declaration of the target, the prompt and the
options of a command that continues a recorded session; :func:`session_command`, which turns a
function of :class:`SessionArgs` into a typer command with exactly those parameters (minus the
ones a command leaves out); the resolution of ``[--last | SESSION_ID | PATH] [PROMPT]`` to a rollout
file; ``resume`` itself, and ``exec resume`` (Codex's: the same, never the interactive UI). What
does not: running the session (``run.py``), compaction's own rules (``compact_cmd.py``).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import sys
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_type_hints

import typer

from mini_codex.cli.boundary import exit_with
from mini_codex.cli.codex_flags import AddDirOpt, CyberAccessOpt, ThreadSourceOpt, flag_notices
from mini_codex.cli.env import stdin_is_terminal
from mini_codex.cli.exec_extras import (
    ExecExtras,
    ImageOpt,
    JsonEventsOpt,
    LastMessageOpt,
    ProfileOpt,
    SchemaOpt,
    SkipGitOpt,
    json_format,
    load_output_schema,
    read_prompt,
)
from mini_codex.cli.oss import LocalProviderOpt, OssFlags, OssOpt
from mini_codex.cli.run import (
    ApprovalOpt,
    CdOpt,
    ConfigOpt,
    JsonOpt,
    ModelOpt,
    SandboxOpt,
    TraceOpt,
    find_rollout,
    latest_rollout,
    run_session,
)
from mini_codex.errors import MiniCodexError

if TYPE_CHECKING:  # the runtime loads only when a session runs
    from mini_codex.host import Session

__all__ = ["SessionArgs", "exec_resume_command", "resume_command", "session_command"]

TargetArg = Annotated[str | None, typer.Argument(help="Session id (or prefix) or rollout PATH.")]
PromptArg = Annotated[str | None, typer.Argument(help="The next task; '-' reads stdin.")]
LastOpt = Annotated[
    bool,
    typer.Option("--last", help="The most recent session (of this directory, else any)."),
]


@dataclass(frozen=True)
class SessionArgs:
    """The command line of ``resume`` (``compact`` takes the same, without the prompt)."""

    target: TargetArg = None
    prompt: PromptArg = None
    last: LastOpt = False
    model: ModelOpt = None
    cd: CdOpt = None
    sandbox: SandboxOpt = None
    ask_for_approval: ApprovalOpt = None
    json_: JsonOpt = False
    trace_requests: TraceOpt = None
    config: ConfigOpt = None
    json_events: JsonEventsOpt = None
    output_last_message: LastMessageOpt = None
    output_schema: SchemaOpt = None
    skip_git_repo_check: SkipGitOpt = False
    image: ImageOpt = None
    profile: ProfileOpt = None
    oss: OssOpt = False
    local_provider: LocalProviderOpt = None
    add_dir: AddDirOpt = None
    thread_source: ThreadSourceOpt = None
    cyber_access_program: CyberAccessOpt = None

    def session_and_prompt(self) -> tuple[Path, str | None]:
        """The rollout to continue and the prompt given (``--last`` makes TARGET the prompt)."""
        if self.last:
            return latest_rollout(self.cd), self.target if self.prompt is None else self.prompt
        if self.target is None:
            raise MiniCodexError("give a SESSION_ID or PATH, or --last")
        return find_rollout(self.target), self.prompt

    def extras(self) -> ExecExtras:
        return ExecExtras(
            json_format=json_format(self.json_, self.json_events),
            output_last_message=self.output_last_message,
            output_schema=load_output_schema(self.output_schema),
            images=tuple(self.image or ()),
            profile=self.profile,
            add_dirs=tuple(self.add_dir or ()),
            notices=flag_notices(self.thread_source, self.cyber_access_program),
        )

    def run(
        self,
        path: Path,
        prompt: str,
        *,
        extras: ExecExtras | None = None,
        action: Callable[[Session], Awaitable[object]] | None = None,
    ) -> int:
        """Open the session of ``path`` with these options; run ``prompt`` (or ``action``)."""
        extras = extras if extras is not None else self.extras()
        return run_session(
            prompt,
            model=self.model,
            cd=self.cd,
            sandbox=self.sandbox,
            as_json=extras.json_format is not None,
            trace_requests=self.trace_requests,
            overrides=self.config or [],
            resume_path=path,
            extras=extras,
            approval=self.ask_for_approval,
            oss=OssFlags(self.oss, self.local_provider),
            action=action,
        )


def session_command(
    body: Callable[[SessionArgs], int],
    *,
    without: Collection[str] = (),
    helps: Mapping[str, str] | None = None,
) -> Callable[..., None]:
    """A typer command taking :class:`SessionArgs`' fields (except ``without``; ``helps``
    replaces the help text of some) that runs ``body`` behind the CLI's error boundary. Its
    docstring is ``body``'s."""
    hints = get_type_hints(SessionArgs, include_extras=True)
    parameters = [
        inspect.Parameter(
            field.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=field.default,
            annotation=_with_help(hints[field.name], (helps or {}).get(field.name)),
        )
        for field in dataclasses.fields(SessionArgs)
        if field.name not in without
    ]

    def command(**values: Any) -> None:
        exit_with(lambda: body(SessionArgs(**values)))

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__name__ = body.__name__
    command.__doc__ = body.__doc__
    return command


def _with_help(hint: Any, text: str | None) -> Any:
    """``Annotated[T, info]`` with a copy of the typer ``info`` whose help is ``text``."""
    if text is None:
        return hint
    base, info = get_args(hint)
    info = copy.copy(info)
    info.help = text
    annotated: Any = Annotated
    return annotated[base, info]


def _resume(args: SessionArgs) -> int:
    """Continue a recorded session with a new task."""
    given = args.prompt if args.prompt is not None else args.target if args.last else None
    no_prompt = given is None
    if no_prompt and stdin_is_terminal():
        # No prompt on a terminal: continue in the interactive UI (no session: a picker).
        from mini_codex.cli.interactive import UiOptions, run_interactive

        options = UiOptions(
            args.model,
            args.cd,
            args.sandbox,
            args.ask_for_approval,
            args.config or [],
            tuple(args.image or ()),
        )
        where: Path | str = (
            latest_rollout(args.cd)
            if args.last
            else find_rollout(args.target)
            if args.target
            else "pick"
        )
        return run_interactive(options, resume=where)
    path, text = args.session_and_prompt()
    extras = args.extras()
    return args.run(path, read_prompt(text, sys.stdin, sys.stderr), extras=extras)


def _exec_resume(args: SessionArgs) -> int:
    """Continue a recorded session non-interactively (``mini-codex exec [OPTIONS] resume …``):
    the prompt is the argument, else stdin; never the interactive UI."""
    path, text = args.session_and_prompt()
    return args.run(path, read_prompt(text, sys.stdin, sys.stderr))


resume_command = session_command(_resume)
exec_resume_command = session_command(
    _exec_resume,
    helps={
        "last": "The most recent session (of this directory, else any); then TARGET is the prompt."
    },
)
