from __future__ import annotations

import pytest

from mini_codex.config import Config, ModelProviderConfig, apply_overrides, load_config
from mini_codex.errors import ConfigError


def test_empty_config_has_defaults() -> None:
    assert load_config(None) == Config()


def test_model_provider_table_is_parsed() -> None:
    text = """
model = "llama3"
model_provider = "ollama"

[model_providers.ollama]
name = "Ollama"
base_url = "http://127.0.0.1:11434/v1"
wire_api = "chat"
"""
    config = load_config(text)
    assert config.model == "llama3"
    assert config.model_providers == {
        "ollama": ModelProviderConfig(
            name="Ollama", base_url="http://127.0.0.1:11434/v1", wire_api="chat"
        )
    }


def test_overrides_are_toml_values_or_strings() -> None:
    config = load_config(
        'model = "a"',
        [
            "model=b",
            "rollout.checkpoint_every_items=10",
            "sandbox_workspace_write.network_access=true",
        ],
    )
    assert (
        config.model,
        config.rollout.checkpoint_every_items,
        config.sandbox_workspace_write.network_access,
    ) == ("b", 10, True)


def test_override_does_not_mutate_input() -> None:
    data = {"rollout": {"fsync_at_turn_end": True}}
    assert apply_overrides(data, ["rollout.fsync_at_turn_end=false"]) == {
        "rollout": {"fsync_at_turn_end": False}
    }
    assert data == {"rollout": {"fsync_at_turn_end": True}}


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        ("model = ", [], "config.toml: invalid TOML"),
        (None, ["novalue"], "bad -c override 'novalue': expected key=value"),
        (None, ["a..b=1"], "empty key segment"),
        ('model = "x"', ["model.sub=1"], "'model' is not a table"),
        (None, ["sandbox_mode=everything"], "config.toml: sandbox_mode: Input should be"),
    ],
)
def test_bad_config_is_a_clear_error(text: str | None, overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(".", r"\.")):
        load_config(text, overrides)


def test_unknown_keys_are_reported_not_fatal() -> None:
    config = load_config('file_opener = "x"\n[model_providers.p]\nmystery = 1\n')
    assert config.unknown_keys() == ["file_opener", "model_providers.p.mystery"]
    # `notify` and `[hooks]` are known since the automation round
    assert load_config('notify = ["x"]\n[hooks]\n').unknown_keys() == []
