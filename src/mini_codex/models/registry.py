"""Model strings to model clients: a short-name table of dotted paths, imported lazily.

A model string is ``PROVIDER:TARGET`` when ``PROVIDER`` is a name in the table (``scripted:PATH``,
``openai:gpt-5.1-codex``, ``chat:llama3.2:3b``), otherwise it is a model name for the default
provider (so names containing ``:``, common with Ollama, still work). Each table entry is
``"module:attr[.attr]"`` naming a callable ``(ModelClientOptions) -> ModelClient``; nothing is
imported until a client is resolved, so a provider whose SDK is missing fails only when chosen.

The CLI reads the environment and the config; this module only receives what it needs as
arguments (``ModelClientOptions``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import cast

import msgspec

from mini_codex.config import ModelProviderConfig
from mini_codex.errors import ConfigError
from mini_codex.models.base import ModelClient, ModelClientOptions

PROVIDERS: Mapping[str, str] = {
    "openai": "mini_codex.models.openai_responses:OpenAIResponsesClient.from_options",
    "chat": "mini_codex.models.chat_completions:ChatCompletionsClient.from_options",
    "scripted": "mini_codex.testing.script_file:scripted_model_from_options",
}
"""Provider short name -> dotted path of its factory."""

WIRE_API_PROVIDERS: Mapping[str, str] = {"responses": "openai", "chat": "chat"}
"""``[model_providers.NAME].wire_api`` -> the short name of the provider implementing it."""


ModelClientFactory = Callable[[ModelClientOptions], ModelClient]


class ModelSpec(msgspec.Struct, frozen=True):
    """A parsed model string."""

    provider: str
    target: str


class ResolvedModel(msgspec.Struct, frozen=True):
    """A provider chosen for a model string, with its factory loaded."""

    provider: str
    target: str
    factory: ModelClientFactory

    def create(
        self,
        *,
        provider_name: str | None = None,
        provider: ModelProviderConfig | None = None,
        api_key: str | None = None,
        organization: str | None = None,
        project: str | None = None,
    ) -> ModelClient:
        """Build the client (may raise ``ConfigError`` for a bad script or missing settings)."""
        options = ModelClientOptions(
            model=self.target,
            provider_name=provider_name or self.provider,
            provider=provider if provider is not None else ModelProviderConfig(),
            api_key=api_key,
            organization=organization,
            project=project,
        )
        return self.factory(options)


def parse_model_spec(
    spec: str, *, default_provider: str = "openai", known: Mapping[str, str] = PROVIDERS
) -> ModelSpec:
    """Split ``PROVIDER:TARGET`` if ``PROVIDER`` is known; else the whole string is a model name."""
    name = spec.strip()
    if not name:
        raise ConfigError("empty model name")
    prefix, sep, rest = name.partition(":")
    if sep and prefix in known:
        if not rest.strip():
            what = "a script path" if prefix == "scripted" else "a model name"
            raise ConfigError(f"model {spec!r}: expected {prefix}:<{what}>")
        return ModelSpec(prefix, rest.strip())
    return ModelSpec(default_provider, name)


def resolve_model(
    spec: str,
    *,
    factories: Mapping[str, str] | None = None,
    default_provider: str = "openai",
) -> ResolvedModel:
    """Choose and import the provider for ``spec``; errors are ``ConfigError``.

    ``factories`` replaces the built-in ``PROVIDERS`` table (tests, plugins).
    """
    table = PROVIDERS if factories is None else factories
    parsed = parse_model_spec(spec, default_provider=default_provider, known=table)
    path = table.get(parsed.provider)
    if path is None:
        known = ", ".join(sorted(table))
        raise ConfigError(f"unknown model provider {parsed.provider!r} (known: {known})")
    return ResolvedModel(parsed.provider, parsed.target, load_factory(parsed.provider, path))


def provider_for_wire_api(wire_api: str) -> str:
    """The provider short name implementing a ``wire_api`` value."""
    try:
        return WIRE_API_PROVIDERS[wire_api]
    except KeyError:
        known = ", ".join(sorted(WIRE_API_PROVIDERS))
        raise ConfigError(f"unknown wire_api {wire_api!r} (known: {known})") from None


def load_factory(provider: str, path: str) -> ModelClientFactory:
    """Import ``"module:attr[.attr]"``; a missing module or attribute is a ``ConfigError``."""
    module_name, sep, attr_path = path.partition(":")
    if not sep or not module_name or not attr_path:
        raise ConfigError(f"model provider {provider!r}: bad factory path {path!r}")
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"model provider {provider!r}: provider module not available ({module_name}: {exc})"
        ) from exc
    for attr in attr_path.split("."):
        try:
            target = getattr(target, attr)
        except AttributeError:
            raise ConfigError(
                f"model provider {provider!r}: provider module not available "
                f"({module_name} has no {attr_path!r})"
            ) from None
    if not callable(target):
        raise ConfigError(f"model provider {provider!r}: {path!r} is not callable")
    return cast(ModelClientFactory, target)
