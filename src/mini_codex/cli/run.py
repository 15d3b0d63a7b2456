"""``mini-codex exec`` and the session runner it shares with ``resume`` and ``compact``
(``resume_cmd.py``): run a turn non-interactively and stream events."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TextIO

import anyio
import orjson
import typer

from mini_codex.cli.approval_prompt import terminal_callback
from mini_codex.cli.codex_flags import (
    AddDirOpt,
    CyberAccessOpt,
    ThreadSourceOpt,
    flag_notices,
    run_notices,
    with_added_dirs,
)
from mini_codex.cli.elicitation_prompt import terminal_elicitation
from mini_codex.cli.entry import SignalExit, settle_heap
from mini_codex.cli.env import (
    api_key_for,
    child_environment,
    load_effective_config,
    local_timezone,
    mini_codex_home,
    process_environment,
    stdin_is_terminal,
    user_shell,
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
    turn_input,
)
from mini_codex.cli.oss import LocalProviderOpt, OssFlags, OssOpt, open_local_model
from mini_codex.config import Config
from mini_codex.errors import MiniCodexError
from mini_codex.models.base import ModelClient, Prompt
from mini_codex.models.registry import resolve_model
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import (
    AgentMessageDelta,
    ErrorEvent,
    ItemCompleted,
    SessionEvent,
)

if TYPE_CHECKING:  # the runtime (and the MCP SDK) load only when a session runs
    from anyio.abc import TaskStatus
    from rich.console import Console

    from mini_codex.models.trace_line import TraceLineEncoder
    from mini_codex.protocol.session_events import SessionEvent
    from mini_codex.runtime.approvals import ApprovalCallback
    from mini_codex.runtime.session import Session, SessionOptions
    from mini_codex.skills.model import SkillSelection
    from mini_codex.world_state.extensions import WorldStateExtension

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


def client_for(model: str, config: Config, *, codex_api_key: bool = False) -> ModelClient:
    """The model client of ``model``; ``codex_api_key``: the key of the built-in provider may
    come from ``CODEX_API_KEY`` (non-interactive runs, ``env.api_key_for``)."""
    choice = api_key_for(config, codex_api_key=codex_api_key)
    resolved = resolve_model(model, default_provider=choice.provider)
    provider = config.model_providers.get(choice.provider_name)
    if provider is None and resolved.provider in ("openai", "chat"):
        from mini_codex.config import ModelProviderConfig

        # The built-in provider: openai_base_url / OPENAI_BASE_URL (or api.openai.com), key
        # from CODEX_API_KEY (exec) or OPENAI_API_KEY.
        provider = ModelProviderConfig(
            name="OpenAI", base_url=choice.base_url, env_key=choice.key_env
        )
    return resolved.create(
        provider_name=choice.provider_name,
        provider=provider,
        api_key=choice.api_key,
        organization=choice.organization,
        project=choice.project,
    )


def sandbox_policy(choice: str | None, config: Config) -> SandboxPolicy | None:
    match choice:
        case None:
            return None
        case "read-only":
            return SandboxPolicy.read_only()
        case "workspace-write":
            settings = config.sandbox_workspace_write
            return SandboxPolicy.workspace_write(
                tuple(settings.writable_roots),
                network_access=settings.network_access,
                exclude_tmpdir_env_var=settings.exclude_tmpdir_env_var,
                exclude_slash_tmp=settings.exclude_slash_tmp,
            )
        case "danger-full-access":
            return SandboxPolicy.danger_full_access()
        case _:
            raise MiniCodexError(
                f"unknown --sandbox {choice!r} (read-only, workspace-write, danger-full-access)"
            )


def approval_choice(choice: str | None) -> ApprovalPolicy | None:
    match choice:
        case None:
            return None
        case "untrusted" | "on-failure" | "on-request" | "never":
            return choice
        case _:
            raise MiniCodexError(
                f"unknown --ask-for-approval {choice!r} (untrusted, on-failure, on-request, never)"
            )


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


def session_cwd(cd: Path | None, resume_path: Path | None) -> Path:
    """The session's directory: ``--cd``, else the resumed session's, else the current one.
    Resuming a session recorded in the home directory (or ``/``) without ``--cd`` is refused:
    it would silently make that the sandbox's writable root."""
    if cd is None and resume_path is not None:
        from mini_codex.rollout.resume import missing_cwd_refusal

        cd = recorded_cwd(resume_path)
        refusal = missing_cwd_refusal(str(cd) if cd else None, cd is not None and cd.is_dir())
        if refusal is not None:
            raise MiniCodexError(refusal)
        if cd is not None and cd.resolve() in (Path.home().resolve(), Path("/")):
            raise MiniCodexError(
                f"the session was recorded in {cd}; resuming there would make it the "
                f"sandbox's writable root. Pass --cd DIR (--cd {cd} to confirm)."
            )
    cwd = (cd or Path.cwd()).resolve()
    if not cwd.is_dir():
        raise MiniCodexError(f"--cd {cwd}: not a directory")
    return cwd


def cli_session_options(
    cwd: Path,
    home: Path,
    client: ModelClient,
    config: Config,
    model_name: str,
    policy: SandboxPolicy | None,
    *,
    resume_path: Path | None,
    approval_policy: ApprovalPolicy | None,
    approval_callback: ApprovalCallback,
    on_event: Callable[[SessionEvent], None],
    **extra: Any,
) -> SessionOptions:
    """The options of a session the CLI opens (``exec``, ``resume``, the UI): this process's
    shell, timezone and environment; ``extra`` are further ``SessionOptions`` fields."""
    from mini_codex.environments.config import load_environments
    from mini_codex.runtime.session import SessionOptions

    # environments hook (issue 26): $MINI_CODEX_HOME/environments.toml, else the variable
    extra.setdefault(
        "environments", load_environments(home, os.environ.get("MINI_CODEX_EXEC_SERVER_URL"))
    )
    extra.setdefault("user_home", Path.home())  # ~/.agents/skills
    extra.setdefault("extensions", installed_extensions())
    return SessionOptions(
        cwd=cwd,
        home=home,
        client=client,
        config=config,
        model="scripted" if model_name.startswith("scripted:") else model_name,
        sandbox=policy,
        shell=user_shell(),
        env=child_environment(config),
        timezone=local_timezone(),
        resume_path=resume_path,
        on_event=on_event,
        environ=process_environment(),
        approval_policy=approval_policy,
        approval_callback=approval_callback,
        **extra,
    )


def skill_selections(paths: tuple[Path, ...]) -> list[SkillSelection]:
    """``--skill PATH`` options as structured skill inputs; a missing file is refused."""
    from mini_codex.skills.model import SkillSelection

    selections = []
    for path in paths:
        if not path.is_file():
            raise MiniCodexError(f"--skill {path}: no such file")
        selections.append(SkillSelection(path=str(path.resolve())))
    return selections


def installed_extensions() -> list[WorldStateExtension]:
    """The world-state extensions installed in this Python (entry points of the
    ``mini_codex.world_state`` group, see docs/extensions.md)."""
    import importlib.metadata

    from mini_codex.world_state.extensions import EXTENSION_ENTRY_POINT_GROUP, load_extensions

    return load_extensions(importlib.metadata.entry_points(group=EXTENSION_ENTRY_POINT_GROUP))


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
    home = mini_codex_home()
    config = load_effective_config(home, overrides, profile=extras.profile if extras else None)
    model_name = model or config.model
    from mini_codex.runtime.session import Session

    cwd = session_cwd(cd, resume_path)
    # Everything that can be refused is checked before anything is created or opened.
    add_dirs = extras.add_dirs if extras else ()
    config = with_added_dirs(config, add_dirs)
    policy = sandbox_policy(sandbox, config)
    mode = policy.mode if policy is not None else config.sandbox_mode
    for notice in run_notices(extras.notices if extras else (), config, add_dirs, mode):
        _notice(notice)
    user_input = turn_input(prompt, extras.images if extras else ())
    skill_inputs = skill_selections(extras.skills if extras else ())
    approval_policy = approval_choice(approval)
    local = open_local_model(oss or OssFlags(), model, config, notify=_notice)
    if local is not None:
        config, model_name = local.config, local.name
    client = (
        local.client if local is not None else client_for(model_name, config, codex_api_key=True)
    )
    settle_heap()  # the heavy imports are done (the provider's SDK too)
    try:
        trace = _open_trace(trace_requests)
    except MiniCodexError:
        anyio.run(client.aclose)
        if local is not None:
            local.close()
        raise
    extras = extras or ExecExtras()
    output = _Output(as_json, sys.stdout, trace, codex_json=extras.json_format == "codex")
    options = cli_session_options(
        cwd,
        home,
        client,
        config,
        model_name,
        policy,
        resume_path=resume_path,
        approval_policy=approval_policy,
        approval_callback=terminal_callback(interactive=stdin_is_terminal()),
        elicitation_callback=terminal_elicitation(interactive=stdin_is_terminal()),
        on_event=output.event,
        on_request=output.request,
        persist=not extras.ephemeral,
        output_schema=extras.output_schema,
    )

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
            await client.aclose()

    async def _in_signal_scope() -> None:
        async with anyio.create_task_group() as tg:
            # Installed before the session opens: from here on the first signal is handled
            # here (an open in progress is cancelled, a running turn is interrupted and
            # records the abort), not by ``entry``'s start-up handler.
            await tg.start(_interrupt_on_signal, opened, interrupted, tg.cancel_scope)
            async with Session.open(options) as session:
                opened.append(session)
                if not interrupted:
                    await (
                        action(session)
                        if action is not None
                        else session.run_turn(user_input, skills=skill_inputs)
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
        if output.events == 0:
            # Nothing was shown yet: the same one line as a signal during the rest of start-up.
            raise SignalExit(interrupted[0])
        return 128 + interrupted[0]
    return output.exec_json.finish(extras, sys.stderr) or (1 if output.errors else 0)


async def _interrupt_on_signal(
    opened: list[Session],
    received: list[int],
    opening: anyio.CancelScope,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """The first Ctrl-C (or SIGTERM) interrupts the turn through the session, so running tools
    get their aborted outputs recorded (before the session is open, it cancels ``opening``);
    after it, a second signal gets the handling the process had before (``entry.py``: one line,
    exit 130/143), as does a signal during shutdown."""
    if threading.current_thread() is not threading.main_thread():
        task_status.started()  # an in-process run off the main thread: signals are not ours
        return
    previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()
            async for signum in signals:
                received.append(int(signum))
                if opened:
                    opened[0].interrupt()
                else:
                    opening.cancel()
                return
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


def _notice(text: str) -> None:
    typer.echo(text, err=True)


def _open_trace(path: Path | None) -> TextIO | None:
    if path is None:
        return None
    try:
        return path.open("a", encoding="utf-8")
    except OSError as exc:
        raise MiniCodexError(f"--trace-requests {path}: {exc.strerror or exc}") from None


def recorded_cwd(path: Path) -> Path | None:
    """The cwd a session was recorded in (resume runs there by default, and refuses to when it
    is gone: ``rollout.resume.missing_cwd_refusal``)."""
    from mini_codex.rollout.resume import read_session_meta

    try:
        meta = read_session_meta(path)
    except MiniCodexError:
        return None
    if meta is None or not meta.cwd:
        return None
    return Path(meta.cwd)


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
    from mini_codex.rollout.index import SessionIndex

    with SessionIndex(mini_codex_home()) as index:
        index.refresh()
        cwd = str((cd or Path.cwd()).resolve())
        found = index.latest(cwd=cwd) or index.latest()
    _print_notices(index.notices)
    if found is None:
        raise MiniCodexError(f"no recorded sessions under {mini_codex_home()}")
    return Path(found.path)


def find_rollout(target: str) -> Path:
    path = Path(target).expanduser()
    if path.exists():
        return path
    from mini_codex.rollout.index import SessionIndex

    with SessionIndex(mini_codex_home()) as index:
        index.refresh()
        found = index.find(target)
    _print_notices(index.notices)
    if not found:
        raise MiniCodexError(f"no session or rollout file matches {target!r}")
    if len(found) > 1:
        ids = ", ".join(info.id for info in found[:5])
        raise MiniCodexError(f"{target!r} matches several sessions ({ids}); give more of the id")
    return Path(found[0].path)


def _print_notices(notices: list[str]) -> None:
    for notice in notices:
        typer.echo(f"notice: {notice}", err=True)


def exit_with(run: Callable[[], int]) -> None:
    """The CLI's error boundary: library errors become one clear line and exit code 2."""
    try:
        code = run()
    except MiniCodexError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)
