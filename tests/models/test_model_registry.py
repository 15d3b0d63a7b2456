"""Model registry: model strings to providers, lazy imports, clear errors."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import pytest

import mini_codex.models as models_pkg
from mini_codex.config import ModelProviderConfig
from mini_codex.errors import ConfigError
from mini_codex.models import (
    PROVIDERS,
    Completed,
    Created,
    ModelClientOptions,
    ModelEvent,
    ModelSpec,
    Prompt,
    parse_model_spec,
    provider_for_wire_api,
    resolve_model,
)
from mini_codex.testing import ScriptedModel


class RecordingClient:
    """A provider that remembers the options it was built with."""

    def __init__(self, options: ModelClientOptions) -> None:
        self.options = options

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        yield Created(None)
        yield Completed(None)

    async def aclose(self) -> None:
        pass

    @classmethod
    def from_options(cls, options: ModelClientOptions) -> RecordingClient:
        return cls(options)


NOT_CALLABLE = 42

FAKE_TABLE = {
    "fake": f"{__name__}:RecordingClient.from_options",
    "direct": f"{__name__}:RecordingClient",
    "missing": "mini_codex.models.no_such_module:Client",
    "noattr": f"{__name__}:NoSuchClass",
    "notcallable": f"{__name__}:NOT_CALLABLE",
    "badpath": "no-colon-here",
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("scripted:examples/demo.jsonl", ModelSpec("scripted", "examples/demo.jsonl")),
        ("openai:gpt-5.1-codex", ModelSpec("openai", "gpt-5.1-codex")),
        ("gpt-5.1-codex", ModelSpec("openai", "gpt-5.1-codex")),
        ("chat:llama3.2:3b", ModelSpec("chat", "llama3.2:3b")),
        ("llama3.2:3b", ModelSpec("openai", "llama3.2:3b")),
        ("  scripted: /tmp/a b.jsonl ", ModelSpec("scripted", "/tmp/a b.jsonl")),
    ],
)
def test_model_strings_split_only_at_known_provider_prefixes(
    spec: str, expected: ModelSpec
) -> None:
    assert parse_model_spec(spec) == expected


def test_bare_names_use_the_given_default_provider() -> None:
    assert parse_model_spec("qwen2.5-coder", default_provider="chat") == ModelSpec(
        "chat", "qwen2.5-coder"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty model name"),
        ("   ", "empty model name"),
        ("scripted:", "model 'scripted:': expected scripted:<a script path>"),
        ("openai: ", "model 'openai: ': expected openai:<a model name>"),
    ],
)
def test_malformed_model_strings_are_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_model_spec(spec)
    assert str(raised.value) == message


def test_factory_gets_the_target_and_the_provider_settings() -> None:
    resolved = resolve_model("fake:my-model", factories=FAKE_TABLE)
    settings = ModelProviderConfig(base_url="http://127.0.0.1:9/v1", env_key="LOCAL_KEY")
    client = resolved.create(provider_name="local", provider=settings, api_key="sk-test")
    assert isinstance(client, RecordingClient)
    assert client.options == ModelClientOptions(
        model="my-model", provider_name="local", provider=settings, api_key="sk-test"
    )


def test_a_class_itself_can_be_the_factory() -> None:
    client = resolve_model("direct:m", factories=FAKE_TABLE).create()
    assert isinstance(client, RecordingClient)
    assert client.options == ModelClientOptions(model="m", provider_name="direct")


def test_bare_name_with_unknown_default_provider_lists_known_providers() -> None:
    with pytest.raises(ConfigError) as raised:
        resolve_model("some-model", factories=FAKE_TABLE, default_provider="anthropic")
    assert str(raised.value) == (
        "unknown model provider 'anthropic' (known: badpath, direct, fake, missing, noattr, "
        "notcallable)"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "missing:m",
            "model provider 'missing': provider module not available "
            "(mini_codex.models.no_such_module: "
            "No module named 'mini_codex.models.no_such_module')",
        ),
        (
            "noattr:m",
            f"model provider 'noattr': provider module not available "
            f"({__name__} has no 'NoSuchClass')",
        ),
        (
            "notcallable:m",
            f"model provider 'notcallable': '{__name__}:NOT_CALLABLE' is not callable",
        ),
        ("badpath:m", "model provider 'badpath': bad factory path 'no-colon-here'"),
    ],
)
def test_unloadable_providers_are_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        resolve_model(spec, factories=FAKE_TABLE)
    assert str(raised.value) == message


def test_plain_model_names_resolve_to_the_openai_responses_provider() -> None:
    from mini_codex.models.openai_responses import OpenAIResponsesClient

    resolved = resolve_model("gpt-5.1-codex")
    assert (resolved.provider, resolved.target) == ("openai", "gpt-5.1-codex")
    assert resolved.factory == OpenAIResponsesClient.from_options


def test_builtin_table_names_the_providers() -> None:
    assert sorted(PROVIDERS) == ["chat", "openai", "scripted"]
    assert PROVIDERS["openai"] == (
        "mini_codex.models.openai_responses:OpenAIResponsesClient.from_options"
    )


def test_scripted_model_resolves_from_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "demo.jsonl"
    script.write_text('{"output": [{"type": "message", "content": "done"}]}\n', encoding="utf-8")
    resolved = resolve_model(f"scripted:{script}")
    client = resolved.create()
    assert (resolved.provider, resolved.target) == ("scripted", str(script))
    assert isinstance(client, ScriptedModel)
    assert (client.remaining, client.name) == (1, str(script))


def test_scripted_model_with_a_broken_script_is_a_config_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text('{"output": []}\n{"output": 3}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        resolve_model(f"scripted:{script}").create()
    assert str(raised.value) == (f'{script}:2: "output" must be a list of response items, got int')


@pytest.mark.parametrize(("wire_api", "provider"), [("responses", "openai"), ("chat", "chat")])
def test_wire_api_selects_the_provider(wire_api: str, provider: str) -> None:
    assert provider_for_wire_api(wire_api) == provider


def test_unknown_wire_api_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"unknown wire_api 'grpc' \(known: chat, responses\)"):
        provider_for_wire_api("grpc")


def test_importing_models_imports_no_provider_or_testing_module() -> None:
    code = (
        "import sys, mini_codex.models\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('mini_codex.'))\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded = result.stdout.strip().split(",")
    assert [m for m in loaded if "testing" in m or "openai" in m or "chat" in m] == []


def test_models_all_lists_every_public_name() -> None:
    public = {name for name in vars(models_pkg) if not name.startswith("_")}
    # Submodules become package attributes once imported (provider modules too, when other
    # tests in the same process loaded them).
    submodules = {name for name, value in vars(models_pkg).items() if isinstance(value, ModuleType)}
    assert set(models_pkg.__all__) == public - submodules
