"""The one model-client builder: a model string + the config + the host's credentials →
:class:`ModelChoice` (plain, picklable data: batch ships it to workers) → a ``ModelClient``.

The rules live here once: which provider serves a model string (``[model_providers.NAME]``'s
``wire_api``, else OpenAI Responses), where the key comes from (the provider's ``env_key``, else
``OPENAI_API_KEY``; or the credentials an embedding process gave), the built-in OpenAI provider
(``OPENAI_BASE_URL`` or api.openai.com), and the model slug a ``scripted:PATH`` model records.
"""

from __future__ import annotations

import msgspec

from mini_codex.config import Config, ModelProviderConfig
from mini_codex.errors import ConfigError
from mini_codex.host.environment import HostEnvironment
from mini_codex.models.base import ModelClient

__all__ = ["ModelChoice", "choose_model", "model_slug"]


def model_slug(model: str) -> str:
    """The model name a session records and shows: ``scripted`` for ``scripted:PATH``."""
    return "scripted" if model.startswith("scripted:") else model


class ModelChoice(msgspec.Struct, frozen=True):
    """A model string with the provider settings and key resolved for it."""

    model: str
    default_provider: str = "openai"
    provider_name: str | None = None
    provider: ModelProviderConfig | None = None
    api_key: str | None = None
    organization: str | None = None
    """``OpenAI-Organization`` (``OPENAI_ORG_ID``)."""
    project: str | None = None
    """``OpenAI-Project`` (``OPENAI_PROJECT_ID``)."""

    @property
    def slug(self) -> str:
        return model_slug(self.model)

    def check(self, *, script: bool = False) -> None:
        """Refuse an unknown ``PROVIDER:`` now (``ConfigError``), before anything is opened;
        ``script``: also a ``scripted:PATH`` whose file cannot be read or parsed."""
        from mini_codex.models.registry import resolve_model

        resolved = resolve_model(self.model, default_provider=self.default_provider)
        if script and resolved.provider == "scripted":
            from mini_codex.testing.script_file import load_script

            load_script(resolved.target)

    def create(self) -> ModelClient:
        """The client (the caller owns it: ``await client.aclose()``)."""
        from mini_codex.models.registry import resolve_model

        resolved = resolve_model(self.model, default_provider=self.default_provider)
        return resolved.create(
            provider_name=self.provider_name,
            provider=self.provider,
            api_key=self.api_key,
            organization=self.organization,
            project=self.project,
        )


CODEX_API_KEY_ENV = "CODEX_API_KEY"


def choose_model(
    model: str, config: Config, env: HostEnvironment, *, codex_api_key: bool = False
) -> ModelChoice:
    """The provider, settings and key for ``model`` under ``config`` (``ConfigError`` for a
    provider that is not configured or a key variable that is not set). The built-in ``openai``
    provider takes its base URL from config ``openai_base_url``, else ``OPENAI_BASE_URL``; its
    key from ``CODEX_API_KEY`` when ``codex_api_key`` (the non-interactive runs, as Codex's
    ``exec`` reads it) and it is set, else ``OPENAI_API_KEY``. A ``[model_providers.NAME]`` table
    reads its ``env_key`` only. Explicit ``env.credentials`` replace every variable."""
    from mini_codex.models.registry import provider_for_wire_api

    name = config.model_provider
    table = config.model_providers.get(name)
    given = env.credentials
    variables = env.variables
    organization = given.organization if given else variables.get("OPENAI_ORG_ID")
    project = given.project if given else variables.get("OPENAI_PROJECT_ID")
    if table is None:
        if name != "openai":
            known = ", ".join(sorted(["openai", *config.model_providers]))
            raise ConfigError(f"model_provider {name!r} is not configured (known: {known})")
        from mini_codex.models.registry import resolve_model

        codex_key = variables.get(CODEX_API_KEY_ENV) if codex_api_key and not given else None
        key_env = CODEX_API_KEY_ENV if codex_key else "OPENAI_API_KEY"
        provider = None
        if resolve_model(model, default_provider="openai").provider in ("openai", "chat"):
            # The built-in provider: openai_base_url / OPENAI_BASE_URL (or api.openai.com).
            fallback = None if given else variables.get("OPENAI_BASE_URL")
            base_url = (given.base_url if given else None) or config.openai_base_url or fallback
            provider = ModelProviderConfig(name="OpenAI", base_url=base_url, env_key=key_env)
        return ModelChoice(
            model=model,
            provider_name="openai",
            provider=provider,
            api_key=given.api_key if given else codex_key or variables.get("OPENAI_API_KEY"),
            organization=organization,
            project=project,
        )
    key = given.api_key if given else None
    if given is None and table.env_key:
        key = variables.get(table.env_key)
        if not key:
            raise ConfigError(
                f"model provider {name!r} needs the environment variable {table.env_key}"
            )
    choice = ModelChoice(
        model=model,
        default_provider=provider_for_wire_api(table.wire_api),
        provider_name=name,
        provider=table,
        api_key=key,
        organization=organization,
        project=project,
    )
    choice.check()
    return choice
