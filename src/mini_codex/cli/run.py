"""``mini-codex exec`` and the session runner it shares with ``resume`` and ``compact``
(``resume_cmd.py``): run a turn non-interactively and stream events."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, TextIO

import anyio
import orjson
import typer

from mini_codex.cli.approval_prompt import terminal_callback
from mini_codex.cli.boundary import exit_with
from mini_codex.cli.codex_flags import (
    AddDirOpt,
    CyberAccessOpt,
    ThreadSourceOpt,
    flag_notices,
    run_notices,
)
from mini_codex.cli.elicitation_prompt import terminal_elicitation
from mini_codex.cli.env import (
    cli_environments,
    host_environment,
    load_effective_config,
    stdin_is_terminal,
)
from mini_codex.cli.exec_extras import (
    EphemeralOpt,
    ExecExtras,
    ExecJsonOutput,
    ImageOpt,
    JsonEventsOpt,
    LastMessageOpt,
    ProfileOpt,
    SchemaOpt,
    SkillOpt,
    SkipGitOpt,
    json_format,
    load_output_schema,
    read_prompt,
)
from mini_codex.cli.oss import LocalProviderOpt, OssFlags, OssOpt, open_local_model
from mini_codex.cli.signals import SignalExit, interrupt_on_signal, settle_heap
from mini_codex.errors import MiniCodexError
from mini_codex.host import (
    ModelChoice,
    SessionSpec,
    read_recorded,
    resolve_session,
)
from mini_codex.host import (
    find_rollout as find_host_rollout,
)
from mini_codex.host import (
    latest_rollout as latest_host_rollout,
)
from mini_codex.models.base import Prompt
from mini_codex.protocol.session_events import (
    AgentMessageDelta,
    ErrorEvent,
    ItemCompleted,
    SessionEvent,
)

if TYPE_CHECKING:  # the runtime (and the MCP SDK) load only when a session runs
    from rich.console import Console

    from mini_codex.host import Session
    from mini_codex.models.trace_line import TraceLineEncoder

SandboxChoice = Literal["read-only", "workspace-write", "danger-full-access"]

ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="Model, or scripted:PATH for a script file.")
]
CdOpt = Annotated[Path | None, typer.Option("--cd", "-C", help="Working directory of the agent.")]
SandboxOpt = Annotated[
    str | None,
    typer.Option("--sandbox", "-s", help="read-only | workspace-write | danger-full-access"),
]
JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        "--experimental-json",
        help="Print Codex's exec events as JSON lines on stdout (--experimental-json: the "
        "same, Codex's older name, which its TypeScript SDK passes).",
    ),
]
ApprovalOpt = Annotated[
    str | None,
    typer.Option(
        "--ask-for-approval",
        "-a",
        help="untrusted | on-failure | on-request | never (default: config approval_policy).",
    ),
]
TraceOpt = Annotated[
    Path | None,
    typer.Option("--trace-requests", help="Append every model request as a JSON line to FILE."),
]
ConfigOpt = Annotated[
    list[str] | None,
    typer.Option("--config", "-c", help="Override a config key: -c key=value (repeatable)."),
]


class _Output:
    """Renders events: JSON lines, or rich text with streamed assistant deltas."""

    def __init__(
        self, as_json: bool, stdout: TextIO, trace: TextIO | None, *, codex_json: bool = False
    ) -> None:
        self.as_json = as_json and not codex_json
        self.exec_json = ExecJsonOutput(stdout if codex_json else None)
        """Codex's exec events (printed with ``--json``); also tracks the final message."""
        self.stdout = stdout
        self.trace = trace
        self.errors = 0
        self.events = 0
        """How many session events were rendered (a signal before the first is a start-up one)."""
        self.streaming = False
        """True while an assistant message is being streamed delta by delta."""

    @cached_property
    def console(self) -> Console:
        """Created on first human output: ``--json`` runs never import rich (start-up)."""
        from rich.console import Console

        return Console(file=self.stdout, highlight=False, soft_wrap=True)

    def event(self, event: SessionEvent) -> None:
        self.events += 1
        if isinstance(event, ErrorEvent):
            self.errors += 1
        self.exec_json.event(event)
        if self.exec_json.stdout is not None:
            return
        if self.as_json:
            self.stdout.write(orjson.dumps(event.to_json()).decode() + "\n")
            self.stdout.flush()
            return
        if isinstance(event, AgentMessageDelta):
            self.console.print(event.delta, end="", style="bold", markup=False)
            self.stdout.flush()
            self.streaming = True
            return
        if self.streaming:
            self.streaming = False
            self.console.print()
            if _is_assistant_message(event):
                return  # already shown as it streamed
        from mini_codex.cli.render import render_event

        text = render_event(event)
        if text is not None:
            self.console.print(text)

    @cached_property
    def trace_lines(self) -> TraceLineEncoder:
        from mini_codex.models.trace_line import TraceLineEncoder

        return TraceLineEncoder()

    def request(self, prompt: Prompt) -> None:
        if self.trace is not None:
            # Byte for byte orjson.dumps(prompt.to_trace_json()), items encoded once each.
            self.trace.write(self.trace_lines.line(prompt).decode() + "\n")
            self.trace.flush()


def _is_assistant_message(event: SessionEvent) -> bool:
    return (
        isinstance(event, ItemCompleted)
        and event.item.get("type") == "message"
        and event.item.get("role") == "assistant"
    )


def run_session(
    prompt: str,
    *,
    model: str | None,
    cd: Path | None,
    sandbox: str | None,
    as_json: bool,
    trace_requests: Path | None,
    overrides: list[str],
    resume_path: Path | None = None,
    extras: ExecExtras | None = None,
    approval: str | None = None,
    oss: OssFlags | None = None,
    action: Callable[[Session], Awaitable[object]] | None = None,
) -> int:
    """Open a session and run ``prompt`` as a turn (or ``action`` on the session instead)."""
    env = host_environment()
    extras = extras or ExecExtras()
    config = load_effective_config(env.home, overrides, profile=extras.profile)
    spec = SessionSpec(
        cwd=cd,
        model=model,
        sandbox=sandbox,
        approval=approval,
        resume=read_recorded(resume_path, strict=False) if resume_path is not None else None,
        prompt=prompt,
        images=extras.images,
        persist=not extras.ephemeral,
        output_schema=extras.output_schema,
        add_dirs=extras.add_dirs,
        skills=extras.skills,
        codex_api_key=True,  # a non-interactive run: CODEX_API_KEY first, as Codex's exec
    )
    # Everything that can be refused is checked before anything is created or opened.
    resolved = resolve_session(spec, config, env)
    mode = resolved.sandbox.mode if resolved.sandbox is not None else resolved.config.sandbox_mode
    for notice in run_notices(extras.notices, resolved.config, extras.add_dirs, mode):
        _notice(notice)
    local = open_local_model(oss or OssFlags(), model, resolved.config, notify=_notice)
    if local is not None:
        resolved = replace(resolved, config=local.config, model=ModelChoice(model=local.name))
    try:
        trace = _open_trace(trace_requests)
    except MiniCodexError:
        if local is not None:
            local.close()
        raise
    output = _Output(as_json, sys.stdout, trace, codex_json=extras.json_format == "codex")
    interrupted: list[int] = []
    opened: list[Session] = []

    async def main() -> None:
        try:
            await _in_signal_scope()
        except BaseExceptionGroup as group:
            # One failure (the session could not open, the turn raised) is raised as itself,
            # as it was before the signal receiver's task group wrapped the session.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            if local is not None:
                await local.client.aclose()  # lent to the session: ours to close

    async def _in_signal_scope() -> None:
        from mini_codex.host import open_session

        async with anyio.create_task_group() as tg:
            # Installed before the session opens: from here on the first signal is handled
            # here (an open in progress is cancelled, a running turn is interrupted and
            # records the abort), not by ``entry``'s start-up handler.
            await tg.start(interrupt_on_signal, opened, interrupted, tg.cancel_scope)
            async with open_session(
                resolved,
                env,
                client=local.client if local is not None else None,
                on_event=output.event,
                on_request=output.request,
                approval_callback=terminal_callback(interactive=stdin_is_terminal()),
                elicitation_callback=terminal_elicitation(interactive=stdin_is_terminal()),
                environments=cli_environments(env),
            ) as session:
                opened.append(session)
                # The imports are done and the session is open (a resumed one replayed): the
                # collector is back on for the turn, its start-up objects frozen out of reach.
                settle_heap()
                if not interrupted:
                    await (
                        action(session)
                        if action is not None
                        else session.run_turn(resolved.input or "", skills=resolved.skills)
                    )
            tg.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        if local is not None:
            local.close()  # stops an embedded model server
        if trace is not None:
            trace.close()
    if interrupted:
        if output.events == 0 or len(interrupted) > 1:
            # Nothing was shown yet, or a second signal cut the wind-down short: the same one
            # line as a signal during the rest of start-up.
            raise SignalExit(interrupted[-1])
        return 128 + interrupted[0]
    return output.exec_json.finish(extras, sys.stderr) or (1 if output.errors else 0)


def _notice(text: str) -> None:
    typer.echo(text, err=True)


def _open_trace(path: Path | None) -> TextIO | None:
    if path is None:
        return None
    try:
        return path.open("a", encoding="utf-8")
    except OSError as exc:
        raise MiniCodexError(f"--trace-requests {path}: {exc.strerror or exc}") from None


def exec_command(
    prompt: Annotated[str | None, typer.Argument(help="The task; '-' reads stdin.")] = None,
    model: ModelOpt = None,
    cd: CdOpt = None,
    sandbox: SandboxOpt = None,
    ask_for_approval: ApprovalOpt = None,
    json_: JsonOpt = False,
    trace_requests: TraceOpt = None,
    config: ConfigOpt = None,
    json_events: JsonEventsOpt = None,
    output_last_message: LastMessageOpt = None,
    output_schema: SchemaOpt = None,
    ephemeral: EphemeralOpt = False,
    skip_git_repo_check: SkipGitOpt = False,
    image: ImageOpt = None,
    skill: SkillOpt = None,
    profile: ProfileOpt = None,
    oss: OssOpt = False,
    local_provider: LocalProviderOpt = None,
    add_dir: AddDirOpt = None,
    thread_source: ThreadSourceOpt = None,
    cyber_access_program: CyberAccessOpt = None,
) -> None:
    """Run one task non-interactively, streaming what the agent does."""

    def run() -> int:
        extras = ExecExtras(
            json_format=json_format(json_, json_events),
            output_last_message=output_last_message,
            output_schema=load_output_schema(output_schema),
            ephemeral=ephemeral,
            images=tuple(image or ()),
            skills=tuple(skill or ()),
            profile=profile,
            add_dirs=tuple(add_dir or ()),
            notices=flag_notices(thread_source, cyber_access_program),
        )
        return run_session(
            read_prompt(prompt, sys.stdin, sys.stderr),
            model=model,
            cd=cd,
            sandbox=sandbox,
            as_json=extras.json_format is not None,
            trace_requests=trace_requests,
            overrides=config or [],
            extras=extras,
            approval=ask_for_approval,
            oss=OssFlags(oss, local_provider),
        )

    exit_with(run)


def latest_rollout(cd: Path | None) -> Path:
    """``--last``: the newest session of ``--cd`` (or this directory), else of any."""
    env = host_environment()
    return latest_host_rollout(env.home, cd or env.cwd, notify=_notify_err)


def find_rollout(target: str) -> Path:
    """A rollout path, or the session whose id starts with ``target``."""
    return find_host_rollout(target, [host_environment().home], notify=_notify_err)


def _notify_err(line: str) -> None:
    typer.echo(line, err=True)
