"""``Codex``: the SDK's entry point (configuration, model client, threads).

Sessions are assembled by ``mini_codex.host`` exactly as for the CLI: one config loader, one
model-client builder, one ``SessionSpec`` → ``ResolvedSession`` step (so a thread refuses what
``exec`` refuses, with the same error class), and the machine's shell and timezone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_codex.config import Config
from mini_codex.errors import MiniCodexError
from mini_codex.host import (
    Credentials,
    HostEnvironment,
    SessionSpec,
    find_rollout,
    import_codex_rollout,
    load_host_config,
    read_recorded,
    resolve_session,
    resume_cwd,
)
from mini_codex.mcp.elicitation import ElicitationHandler
from mini_codex.models.base import ModelClient
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.sdk.errors import CodexInputError, codex_error
from mini_codex.sdk.thread import Thread, ThreadOptions

if TYPE_CHECKING:
    from mini_codex.host import Session

__all__ = ["Codex"]


class Codex:
    """``Codex(home=None, *, api_key=None, base_url=None, organization=None, project=None,
    codex_home=None, env=None, model_client=None, profile=None, **config_overrides)``.

    ``home`` holds ``config.toml`` and the sessions (default ``~/.mini-codex``; the SDK reads no
    environment variables). ``config_overrides`` are config keys laid over the file
    (``model="gpt-5.1-codex"``, ``sandbox_mode="read-only"``, ``mcp_servers={...}``); ``profile``
    selects a ``[profiles.NAME]`` table, as ``--profile`` does.
    ``api_key`` / ``base_url`` / ``organization`` / ``project`` configure the model provider
    (nothing is read from ``OPENAI_API_KEY`` or ``OPENAI_ORG_ID``: pass them, e.g.
    ``api_key=os.environ["OPENAI_API_KEY"]``). ``codex_home`` (default ``~/.codex``) is searched by
    ``resume_thread`` for Codex CLI sessions. ``env`` is the environment of the agent's
    commands. ``model_client`` (e.g. a ``mini_codex.testing.ScriptedModel``) serves every run
    instead of a client built from the config; its owner closes it. A ``scripted:PATH`` model is
    loaded once per ``Codex``, so successive runs continue the same script. The model is told
    the machine's shell (the user's login shell) and timezone.
    """

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        organization: str | None = None,
        project: str | None = None,
        codex_home: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        model_client: ModelClient | None = None,
        profile: str | None = None,
        **config_overrides: Any,
    ) -> None:
        self.home = Path(home).expanduser() if home is not None else Path.home() / ".mini-codex"
        self.codex_home = (
            Path(codex_home).expanduser() if codex_home is not None else Path.home() / ".codex"
        )
        self._overrides = dict(config_overrides)
        self._profile = profile
        self._model_client = model_client
        self._scripted: dict[str, ModelClient] = {}
        self.env: Mapping[str, str] = dict(env or {})
        """The environment of the agent's commands (the SDK does not read ``os.environ``; pass
        e.g. ``{"PATH": ...}``; empty means the shell's defaults)."""
        self.host = HostEnvironment.of_machine(
            self.home,
            child_env=self.env,
            credentials=Credentials(api_key, base_url, organization, project),
            codex_home=self.codex_home,
        )
        """What sessions take from this process (the machine's shell and timezone)."""

    # --- configuration -----------------------------------------------------------------------

    def config(self, **thread_overrides: Any) -> Config:
        """The effective config: ``home/config.toml``, the constructor's and the thread's keys."""
        extra = {**self._overrides, **{k: v for k, v in thread_overrides.items() if v}}
        try:
            return load_host_config(self.home, profile=self._profile, extra=extra)
        except MiniCodexError as exc:
            raise codex_error(exc) from exc

    def _lent_client(
        self, model: str, config: Config, make: Callable[[], ModelClient]
    ) -> ModelClient | None:
        """The client a run borrows (``model_client``, a ``scripted:`` script); None: the run's
        own, made and closed by ``host.open_session``."""
        if self._model_client is not None:
            return self._model_client
        if model.startswith("scripted:"):
            if model not in self._scripted:
                self._scripted[model] = make()
            return self._scripted[model]
        return None

    @asynccontextmanager
    async def _open(
        self,
        options: ThreadOptions,
        rollout: Path | None,
        on_event: Callable[[SessionEvent], None],
    ) -> AsyncIterator[Session]:
        """The ``ThreadOpener`` of this client's threads."""
        from mini_codex.host import open_session

        try:
            config = self.config()
            spec = SessionSpec(
                cwd=options.working_directory,
                model=options.model,
                sandbox=options.sandbox_mode,
                approval=options.approval_policy,
                resume=read_recorded(rollout) if rollout is not None else None,
            )
            resolved = resolve_session(spec, config, self.host)
            client = self._lent_client(resolved.model.model, config, resolved.model.create)
        except MiniCodexError as exc:
            raise codex_error(exc) from exc
        async with open_session(
            resolved,
            self.host,
            client=client,
            on_event=on_event,
            elicitation_callback=options.elicitation_callback,
        ) as session:
            yield session

    # --- threads -----------------------------------------------------------------------------

    def start_thread(
        self,
        *,
        working_directory: str | Path | None = None,
        model: str | None = None,
        sandbox_mode: str | None = None,
        approval_policy: str | None = None,
        skip_git_repo_check: bool = False,
        elicitation_callback: ElicitationHandler | None = None,
    ) -> Thread:
        """A new thread; it starts (and gets its ``id``) with its first ``run``.

        A ``working_directory`` that is missing or not a directory is refused here (CodexError).
        ``elicitation_callback`` answers MCP servers' elicitation requests (``async
        (ElicitationRequest) -> ElicitationAnswer``); without it they are declined."""
        del skip_git_repo_check  # accepted for Codex compatibility: no repository check here
        return Thread(
            self._open,
            ThreadOptions(
                working_directory=_directory(working_directory or Path.cwd()),
                model=model,
                sandbox_mode=sandbox_mode,
                approval_policy=approval_policy,
                elicitation_callback=elicitation_callback,
            ),
        )

    def resume_thread(
        self,
        thread_id: str,
        *,
        working_directory: str | Path | None = None,
        model: str | None = None,
        sandbox_mode: str | None = None,
        approval_policy: str | None = None,
        elicitation_callback: ElicitationHandler | None = None,
    ) -> Thread:
        """A recorded thread: an id (or prefix) of ours or of the Codex CLI, or a rollout path.

        A Codex CLI rollout is copied into ``home`` first (the Codex file is never written).
        Without ``working_directory`` it runs where it was recorded; a thread recorded in the
        home directory or ``/``, or in a directory that is gone, is refused
        (``CodexResumeRefusedError``), as ``resume`` does. A Codex CLI file is copied only once
        it is known to be a rollout that can be resumed."""
        try:
            found = find_rollout(thread_id, [self.home, self.codex_home], what="thread")
            recorded = read_recorded(found)
            given = _directory(working_directory) if working_directory is not None else None
            cwd = _directory(
                resume_cwd(
                    given,
                    recorded.cwd,
                    process_cwd=self.host.cwd,
                    user_home=self.host.user_home,
                    option="working_directory=",
                )
            )
            # Copied only once it is known to be a rollout this SDK can resume where it was.
            path = import_codex_rollout(found, self.home)
        except MiniCodexError as exc:
            raise codex_error(exc) from exc
        options = ThreadOptions(
            working_directory=cwd.resolve(),
            model=model,
            sandbox_mode=sandbox_mode,
            approval_policy=approval_policy,
            elicitation_callback=elicitation_callback,
        )
        return Thread(self._open, options, rollout=path, thread_id=recorded.thread_id)


def _directory(path: str | Path) -> Path:
    """``path`` resolved; ``CodexInputError`` when it is missing or not a directory."""
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_dir():
        what = "does not exist" if not resolved.exists() else "is not a directory"
        raise CodexInputError(f"working directory {resolved} {what}")
    return resolved
