"""``Codex``: the SDK's entry point (configuration, model client, threads)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mini_codex.config import Config, ModelProviderConfig, load_config
from mini_codex.errors import MiniCodexError
from mini_codex.models.base import ModelClient
from mini_codex.models.registry import provider_for_wire_api, resolve_model
from mini_codex.sdk.thread import CodexError, Thread, ThreadOptions

__all__ = ["Codex"]


@dataclass(frozen=True)
class _Connection:
    api_key: str | None
    base_url: str | None
    organization: str | None = None
    project: str | None = None


class Codex:
    """``Codex(home=None, *, api_key=None, base_url=None, organization=None, project=None,
    codex_home=None, **config_overrides)``.

    ``home`` holds ``config.toml`` and the sessions (default ``~/.mini-codex``; the SDK reads no
    environment variables). ``config_overrides`` are config keys laid over the file
    (``model="gpt-5.1-codex"``, ``sandbox_mode="read-only"``, ``mcp_servers={...}``).
    ``api_key`` / ``base_url`` / ``organization`` / ``project`` configure the OpenAI provider
    (nothing is read from ``OPENAI_API_KEY`` or ``OPENAI_ORG_ID``: pass them, e.g.
    ``api_key=os.environ["OPENAI_API_KEY"]``). ``codex_home`` (default ``~/.codex``) is searched by
    ``resume_thread`` for Codex CLI sessions. ``env`` is the environment of the agent's
    commands. ``model_client`` (e.g. a ``mini_codex.testing.ScriptedModel``) serves every run
    instead of a client built from the config; its owner closes it. A ``scripted:PATH`` model is
    loaded once per ``Codex``, so successive runs continue the same script.
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
        **config_overrides: Any,
    ) -> None:
        self.home = Path(home).expanduser() if home is not None else Path.home() / ".mini-codex"
        self.codex_home = (
            Path(codex_home).expanduser() if codex_home is not None else Path.home() / ".codex"
        )
        self._connection = _Connection(api_key, base_url, organization, project)
        self._overrides = dict(config_overrides)
        self._model_client = model_client
        self._scripted: dict[str, ModelClient] = {}
        self.env: Mapping[str, str] = dict(env or {})
        """The environment of the agent's commands (the SDK does not read ``os.environ``; pass
        e.g. ``{"PATH": ...}``; empty means the shell's defaults)."""

    # --- configuration -----------------------------------------------------------------------

    def config(self, **thread_overrides: Any) -> Config:
        """The effective config: ``home/config.toml``, the constructor's and the thread's keys."""
        path = self.home / "config.toml"
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() else None
            extra = {**self._overrides, **{k: v for k, v in thread_overrides.items() if v}}
            return load_config(text, source=str(path), extra=extra)
        except (OSError, MiniCodexError) as exc:
            raise CodexError(str(exc)) from None

    def model_client(self, model: str, config: Config) -> tuple[ModelClient, bool]:
        """The client for ``model`` and whether the caller owns (closes) it."""
        if self._model_client is not None:
            return self._model_client, False
        if model.startswith("scripted:"):
            if model not in self._scripted:
                self._scripted[model] = self._new_client(model, config)
            return self._scripted[model], False
        return self._new_client(model, config), True

    def _new_client(self, model: str, config: Config) -> ModelClient:
        """The client for ``model`` (``scripted:PATH`` runs a script file offline)."""
        try:
            name = config.model_provider
            table = config.model_providers.get(name)
            default = provider_for_wire_api(table.wire_api) if table is not None else "openai"
            resolved = resolve_model(model, default_provider=default)
            if table is None and resolved.provider in ("openai", "chat"):
                table = ModelProviderConfig(name="OpenAI", base_url=self._connection.base_url)
            return resolved.create(
                provider_name=name,
                provider=table,
                api_key=self._connection.api_key,
                organization=self._connection.organization,
                project=self._connection.project,
            )
        except MiniCodexError as exc:
            raise CodexError(str(exc)) from None

    # --- threads -----------------------------------------------------------------------------

    def start_thread(
        self,
        *,
        working_directory: str | Path | None = None,
        model: str | None = None,
        sandbox_mode: str | None = None,
        approval_policy: str | None = None,
        skip_git_repo_check: bool = False,
    ) -> Thread:
        """A new thread; it starts (and gets its ``id``) with its first ``run``.

        A ``working_directory`` that is missing or not a directory is refused here (CodexError)."""
        del skip_git_repo_check  # accepted for Codex compatibility: no repository check here
        return Thread(
            self,
            ThreadOptions(
                working_directory=_directory(working_directory or Path.cwd()),
                model=model,
                sandbox_mode=sandbox_mode,
                approval_policy=approval_policy,
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
    ) -> Thread:
        """A recorded thread: an id (or prefix) of ours or of the Codex CLI, or a rollout path.

        A Codex CLI rollout is copied into ``home`` first (the Codex file is never written), once
        it is known to be a rollout this SDK can resume: nothing is copied for a file that is not
        one, nor for a session whose recorded cwd is gone and no ``working_directory`` is given."""
        from mini_codex.rollout.resume import missing_cwd_refusal, read_session_meta

        path = self._find_rollout(thread_id)
        try:
            meta = read_session_meta(path)
        except MiniCodexError as exc:
            raise CodexError(str(exc)) from None
        recorded = meta.cwd if meta is not None and meta.cwd else None
        if working_directory is not None:
            cwd = _directory(working_directory)
        else:
            refusal = missing_cwd_refusal(
                recorded, recorded is not None and Path(recorded).is_dir(), "working_directory="
            )
            if refusal is not None:
                raise CodexError(refusal)
            cwd = _directory(recorded or Path.cwd())
        if not path.resolve().is_relative_to(self.home.resolve()):
            path = self._import_rollout(path)
        options = ThreadOptions(
            working_directory=cwd,
            model=model,
            sandbox_mode=sandbox_mode,
            approval_policy=approval_policy,
        )
        return Thread(self, options, rollout=path, thread_id=meta.thread_id if meta else None)

    def _find_rollout(self, target: str) -> Path:
        path = Path(target).expanduser()
        if path.is_file():
            return path
        from mini_codex.rollout.index import SessionIndex

        for home in (self.home, self.codex_home):
            if not (home / "sessions").is_dir():
                continue
            index = SessionIndex(home)
            index.refresh()
            found = index.find(target)
            if len(found) > 1:
                ids = ", ".join(info.id for info in found[:5])
                raise CodexError(f"{target!r} matches several threads ({ids}); give more of it")
            if found:
                return Path(found[0].path)
        raise CodexError(f"no thread or rollout file matches {target!r}")

    def _import_rollout(self, source: Path) -> Path:
        day = datetime.now().astimezone()
        folder = self.home / "sessions" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
        target = folder / source.name
        if not target.exists():
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return target


def _directory(path: str | Path) -> Path:
    """``path`` resolved; CodexError when it is missing or not a directory."""
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_dir():
        what = "does not exist" if not resolved.exists() else "is not a directory"
        raise CodexError(f"working directory {resolved} {what}")
    return resolved
