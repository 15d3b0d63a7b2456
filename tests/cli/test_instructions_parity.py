"""Instructions parity with Codex: the global ``$MINI_CODEX_HOME/AGENTS.md`` comes before the
project's files, ``[profiles.NAME]`` + ``--profile``, and one warning line for unknown keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from mini_codex.config import load_config
from mini_codex.errors import ConfigError

runner = CliRunner()


def exec_(tmp_path: Path, *args: str) -> Result:
    from mini_codex.cli.main import app

    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"output": [{"type": "message", "content": "ok"}]}) + "\n")
    env: dict[str, str | None] = {"MINI_CODEX_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": None}
    base = ["exec", "--model", f"scripted:{script}", "--cd", str(tmp_path / "work")]
    return runner.invoke(app, [*base, *args, "go"], env=env)


def requests(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


def test_global_agents_md_comes_before_the_project_files(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "AGENTS.md").write_text("GLOBAL: always be brief.\n")
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / "AGENTS.md").write_text("PROJECT: run the tests.\n")
    trace = tmp_path / "trace.jsonl"
    result = exec_(tmp_path, "--trace-requests", str(trace))
    assert (result.exit_code, result.stderr) == (0, "")
    (request,) = requests(trace)
    texts = [
        part["text"]
        for item in request["input"]
        for part in item.get("content", [])
        if "GLOBAL" in part.get("text", "")
    ]
    (text,) = texts
    assert "GLOBAL: always be brief.\n\n--- project-doc ---\n\nPROJECT: run the tests.\n" in text
    assert text.index("GLOBAL") < text.index("PROJECT")


def test_global_agents_md_alone_is_used_without_project_files(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "AGENTS.md").write_text("GLOBAL ONLY\n")
    (tmp_path / "work").mkdir()
    trace = tmp_path / "trace.jsonl"
    assert exec_(tmp_path, "--trace-requests", str(trace)).exit_code == 0
    dumped = json.dumps(requests(trace)[0]["input"])
    assert "GLOBAL ONLY" in dumped
    assert "project-doc" not in dumped


CONFIG = """
model = "top-model"
sandbox_mode = "read-only"
profile = "fast"

[profiles.fast]
model = "fast-model"

[profiles.deep]
model = "deep-model"
model_reasoning_effort = "high"
"""


def test_profiles_layer_between_the_file_and_the_overrides() -> None:
    assert load_config(CONFIG).model == "fast-model"  # the file's `profile` key
    deep = load_config(CONFIG, profile="deep")
    assert (deep.model, deep.model_reasoning_effort, deep.sandbox_mode, deep.profile) == (
        "deep-model", "high", "read-only", "deep")  # fmt: skip
    assert load_config(CONFIG, ["model=cli-model"], profile="deep").model == "cli-model"
    assert load_config(CONFIG, ["profile=deep"]).model == "deep-model"
    assert load_config(CONFIG).unknown_keys() == []


def test_an_unknown_profile_is_a_clear_error() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(CONFIG, profile="nope")
    assert str(info.value) == "config.toml: profile 'nope' not found (known: deep, fast)"


def test_profile_flag_selects_the_model(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(CONFIG)
    (tmp_path / "work").mkdir()
    trace = tmp_path / "trace.jsonl"
    # The scripted model overrides the slug, so check the profile through the effort setting.
    result = exec_(tmp_path, "--profile", "deep", "--trace-requests", str(trace))
    assert (result.exit_code, result.stderr) == (0, "")
    assert requests(trace)[0]["reasoning"] == {"effort": "high"}
    result = exec_(tmp_path, "--profile", "nope")
    assert result.exit_code == 2
    assert result.stderr.endswith("profile 'nope' not found (known: deep, fast)\n")


def test_unknown_config_and_override_keys_are_one_warning_line(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(
        'colour = "blue"\n[rollout]\nfsync_sometimes = true\n'
    )
    (tmp_path / "work").mkdir()
    result = exec_(tmp_path, "-c", "tui.theme=dark")
    assert result.exit_code == 0
    assert result.stderr == (
        "warning: unknown config keys ignored: colour, tui, rollout.fsync_sometimes\n"
    )
