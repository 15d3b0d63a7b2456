"""``SessionSpec`` → ``ResolvedSession``: every rule that decides what a front end's options mean.

A front end fills a :class:`SessionSpec` with what its user gave (strings as typed, paths as
given, ``None`` for "not given") and calls :func:`resolve_session` with the effective config and
the :class:`~mini_codex.host.environment.HostEnvironment`. It returns a :class:`ResolvedSession`
(plain, frozen data) or raises the refusal, always before anything is created or opened:

- the cwd: ``cwd``, else the resumed session's recorded one (refused in the home directory or ``/``,
  ``ResumeRefusedError``), else the process's; it must be a directory (``InputError``);
- ``sandbox`` and ``approval``: the CLI's spellings (``InputError`` for anything else);
- the user input: the text, or one message with the images after it (``ImageError``);
- the model: ``model`` or ``config.model``; its provider and key, a ``scripted:PATH`` script
  that cannot be read (``ConfigError``).

The checks run in that order, so every front end reports the same first problem. Reading the
images and the script and checking the directory are the only I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_codex.config import Config
from mini_codex.errors import InputError
from mini_codex.host.environment import HostEnvironment
from mini_codex.host.model_client import ModelChoice, choose_model
from mini_codex.host.rollouts import RecordedSession, resume_cwd
from mini_codex.protocol import InputImage, InputText, Message, ResponseItem
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy

__all__ = [
    "ResolvedSession",
    "SessionSpec",
    "TurnInput",
    "approval_choice",
    "build_input",
    "resolve_session",
    "sandbox_policy",
]

TurnInput = str | list[ResponseItem]


@dataclass(frozen=True)
class SessionSpec:
    """What a front end's user asked for (``None``: not given)."""

    cwd: Path | None = None
    model: str | None = None
    sandbox: str | None = None
    """``read-only`` | ``workspace-write`` | ``danger-full-access``; None: the config's."""
    approval: str | None = None
    """``untrusted`` | ``on-failure`` | ``on-request`` | ``never``; None: the config's."""
    resume: RecordedSession | None = None
    prompt: str | None = None
    """The first turn's text (None: the front end sends its input later)."""
    images: tuple[Path, ...] = ()
    persist: bool = True
    output_schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class ResolvedSession:
    """A session ready to be opened by :func:`~mini_codex.host.open.open_session`."""

    config: Config
    cwd: Path
    model: ModelChoice
    sandbox: SandboxPolicy | None
    approval_policy: ApprovalPolicy | None
    resume_path: Path | None
    input: TurnInput | None
    persist: bool = True
    output_schema: dict[str, Any] | None = None


def sandbox_policy(choice: str | None, config: Config) -> SandboxPolicy | None:
    """The policy of a ``--sandbox`` spelling; None keeps the config's ``sandbox_mode``."""
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
            raise InputError(
                f"unknown --sandbox {choice!r} (read-only, workspace-write, danger-full-access)"
            )


def approval_choice(choice: str | None) -> ApprovalPolicy | None:
    match choice:
        case None:
            return None
        case "untrusted" | "on-failure" | "on-request" | "never":
            return choice
        case _:
            raise InputError(
                f"unknown --ask-for-approval {choice!r} (untrusted, on-failure, on-request, never)"
            )


def build_input(text: str, images: tuple[Path, ...] = ()) -> TurnInput:
    """The user input of a turn: the text alone, or one message with the images after it."""
    if not images:
        return text
    from mini_codex.tools.images import image_data_url

    parts: list[Any] = [InputText(text=text)]
    parts += [InputImage(image_url=image_data_url(path)) for path in images]
    return [Message(role="user", content=parts)]


def session_directory(spec: SessionSpec, env: HostEnvironment) -> Path:
    """The cwd rule of the module docstring."""
    recorded = spec.resume.cwd if spec.resume is not None else None
    given = spec.cwd
    if given is not None and not given.is_absolute():
        given = env.cwd / given
    cwd = resume_cwd(
        given,
        recorded if spec.resume is not None else None,
        process_cwd=env.cwd,
        user_home=env.user_home,
    ).resolve()
    if not cwd.is_dir():
        raise InputError(f"--cd {cwd}: not a directory")
    return cwd


def resolve_session(spec: SessionSpec, config: Config, env: HostEnvironment) -> ResolvedSession:
    """Every refusal and rule of the module docstring, in its order."""
    cwd = session_directory(spec, env)
    sandbox = sandbox_policy(spec.sandbox, config)
    user_input = build_input(spec.prompt, spec.images) if spec.prompt is not None else None
    approval = approval_choice(spec.approval)
    model = choose_model(spec.model or config.model, config, env)
    model.check(script=True)
    return ResolvedSession(
        config=config,
        cwd=cwd,
        model=model,
        sandbox=sandbox,
        approval_policy=approval,
        resume_path=spec.resume.path if spec.resume is not None else None,
        input=user_input,
        persist=spec.persist,
        output_schema=spec.output_schema,
    )
