"""``--oss`` and ``--local-provider`` for every front end (``exec``, ``resume``, the UI, ``batch``).

A command declares the two options (``OssOpt``, ``LocalProviderOpt``), then calls
``open_local_model(OssFlags(oss, local_provider), model, config, notify=...)``: None without
``--oss``; otherwise the local server is checked (Ollama, LM Studio) or started (the embedded
llama.cpp server) and a ``LocalModel`` comes back with the client, the model name and the config
to run the session with (context window from the server). ``close()`` it when the session ends
(it stops an embedded server; closing twice is harmless). The demo-model notice goes to
``notify`` once. It blocks (server start, HTTP probes): async front ends call it in a worker
thread, which is fine (the embedded server is not tied to the calling thread).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from mini_codex.config import Config
from mini_codex.errors import ConfigError

if TYPE_CHECKING:
    from mini_codex.models.base import ModelClient
    from mini_codex.models.local import OssModel

OssOpt = Annotated[
    bool,
    typer.Option(
        "--oss",
        help="Use a local model: the embedded llama.cpp server (bundled demo model, or "
        "--model PATH.gguf), Ollama or LM Studio (see --local-provider).",
    ),
]
LocalProviderOpt = Annotated[
    str | None,
    typer.Option(
        "--local-provider",
        help="With --oss: llamacpp | ollama | lmstudio (default: config oss_provider).",
    ),
]


class OssFlags(msgspec.Struct, frozen=True):
    """The two options as given on the command line."""

    oss: bool = False
    local_provider: str | None = None


class LocalModel:
    """A local model opened for one session."""

    def __init__(self, model: OssModel, stack: contextlib.ExitStack, config: Config) -> None:
        self.model = model
        self.config = config
        """The session's config: the provider table and the server's context window filled in."""
        self.client: ModelClient = model.client()
        self._stack = stack

    @property
    def name(self) -> str:
        return self.model.model

    def close(self) -> None:
        self._stack.close()


def _session_config(config: Config, model: OssModel) -> Config:
    providers = {**config.model_providers, model.options.provider_name: model.options.provider}
    return config.model_copy(
        update={
            "model": model.model,
            "model_provider": model.options.provider_name,
            "model_providers": providers,
            "model_context_window": config.model_context_window or model.context_window,
        }
    )


def open_local_model(
    flags: OssFlags,
    model: str | None,
    config: Config,
    *,
    notify: Callable[[str], None] | None = None,
) -> LocalModel | None:
    """The local model for ``--oss`` (module docstring); None when ``--oss`` is not given."""
    if not flags.oss:
        if flags.local_provider is not None:
            raise ConfigError("--local-provider needs --oss")
        return None
    from mini_codex.models.local import OSS_PROVIDERS, OssRequest, open_oss

    provider = flags.local_provider or config.oss_provider
    if provider not in OSS_PROVIDERS:
        known = ", ".join(OSS_PROVIDERS)
        raise ConfigError(f"unknown --local-provider {provider!r} (known: {known})")
    if model is not None and model.startswith("scripted:"):
        raise ConfigError("--oss cannot be combined with a scripted:PATH model")
    request = OssRequest(
        provider=provider,
        model=model,
        provider_config=config.model_providers.get(provider),
        llamacpp=config.llamacpp,
    )
    stack = contextlib.ExitStack()
    try:
        opened = stack.enter_context(open_oss(request))
        local = LocalModel(opened, stack, _session_config(config, opened))
    except BaseException:
        stack.close()
        raise
    if notify is not None and opened.notice is not None:
        notify(opened.notice)
    return local
