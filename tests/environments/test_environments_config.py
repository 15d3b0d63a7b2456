"""``environments.toml`` (strict, Codex's schema) and ``MINI_CODEX_EXEC_SERVER_URL``."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_codex.environments.config import EnvironmentsConfig, ExecutorSpec, load_environments
from mini_codex.errors import ConfigError


def _load(tmp_path: Path, text: str) -> EnvironmentsConfig:
    (tmp_path / "environments.toml").write_text(text)
    return load_environments(tmp_path, None)


def test_the_codex_example(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        """
default = "local"
include_local = true

[[environments]]
id = "worker"
url = "ws://127.0.0.1:4500"
connect_timeout_sec = 3

[[environments]]
id = "devbox"
program = "ssh"
args = ["devbox", "mini-codex exec-server --listen stdio"]
env = { TERM = "dumb" }
cwd = "sub"
initialize_timeout_sec = 7
""",
    )
    assert config == EnvironmentsConfig(
        "local",
        True,
        (
            ExecutorSpec(id="worker", url="ws://127.0.0.1:4500", connect_timeout_s=3.0),
            ExecutorSpec(
                id="devbox",
                program="ssh",
                args=("devbox", "mini-codex exec-server --listen stdio"),
                env={"TERM": "dumb"},
                cwd=str(tmp_path / "sub"),
                initialize_timeout_s=7.0,
            ),
        ),
    )
    assert config.ids() == ["local", "worker", "devbox"]
    assert _load(
        tmp_path,
        'default = "devbox"\n[[environments]]\nid = "worker"\n'
        'url = "ws://h:1"\n[[environments]]\nid = "devbox"\nprogram = "x"\n',
    ).ids() == ["devbox", "local", "worker"]


def test_capability_roots(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        '[[environments]]\nid = "a"\nurl = "ws://h:1"\ncapability_roots = ["/srv/skills"]\n',
    )
    assert config.executors[0].capability_roots == ("/srv/skills",)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("colour = 1\n", "unknown key 'colour'"),
        (
            '[[environments]]\nid = "a"\nurl = "ws://h:1"\nport = 3\n',
            "environments[0]: unknown key 'port'",
        ),
        (
            '[[environments]]\nid = "bad id"\nurl = "ws://h:1"\n',
            "environments[0]: id must match [A-Za-z0-9_-] (1-64 characters), got 'bad id'",
        ),
        (
            f'[[environments]]\nid = "{"x" * 65}"\nurl = "ws://h:1"\n',
            f"environments[0]: id must match [A-Za-z0-9_-] (1-64 characters), got '{'x' * 65}'",
        ),
        (
            '[[environments]]\nid = "Local"\nurl = "ws://h:1"\n',
            "environments[0]: id 'Local' is reserved",
        ),
        (
            '[[environments]]\nid = "a"\nurl = "ws://h:1"\n[[environments]]\nid = "a"\n'
            'url = "ws://h:2"\n',
            "duplicate environment id 'a'",
        ),
        (
            '[[environments]]\nid = "a"\n',
            "environments[0]: environment 'a' needs exactly one of url or program",
        ),
        (
            '[[environments]]\nid = "a"\nurl = "http://h:1"\n',
            "environments[0]: url must start with ws:// or wss://, got 'http://h:1'",
        ),
        (
            '[[environments]]\nid = "a"\nurl = "ws://h:1"\nargs = ["x"]\n',
            "environments[0]: args requires program",
        ),
        (
            '[[environments]]\nid = "a"\nprogram = "ssh"\nconnect_timeout_sec = 1\n',
            "environments[0]: connect_timeout_sec requires url",
        ),
        (
            '[[environments]]\nid = "a"\nurl = "ws://h:1"\ncapability_roots = ["rel/skills"]\n',
            "environments[0]: capability_roots must be a list of absolute paths",
        ),
        ('default = "elsewhere"\n', "default 'elsewhere' is not a configured environment"),
        ("default = [\n", "not valid TOML"),
    ],
)
def test_bad_files_are_one_clear_error(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, text)
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'environments.toml'}: ")
    assert error in message
    assert "\n" not in message


def test_the_variable_without_a_file(tmp_path: Path) -> None:
    assert load_environments(tmp_path, None) == EnvironmentsConfig.local_only()
    assert load_environments(tmp_path, "") == EnvironmentsConfig.local_only()
    assert load_environments(tmp_path, "none") == EnvironmentsConfig(None, False)
    assert load_environments(tmp_path, "NONE").ids() == []
    remote = load_environments(tmp_path, "ws://127.0.0.1:9")
    assert remote == EnvironmentsConfig(
        "remote", False, (ExecutorSpec("remote", "ws://127.0.0.1:9"),)
    )
    assert remote.ids() == ["remote"]
    with pytest.raises(ConfigError, match="MINI_CODEX_EXEC_SERVER_URL must be a ws:// URL or none"):
        load_environments(tmp_path, "http://x")


def test_default_none_means_no_environments(tmp_path: Path) -> None:
    assert _load(tmp_path, 'default = "none"\n').ids() == []
