"""``shell_environment_policy``: what the model's commands see of our environment."""

from __future__ import annotations

from mini_codex.config import ShellEnvironmentPolicy
from mini_codex.policy.environment import child_environment

ENVIRON = {
    "PATH": "/bin",
    "HOME": "/root",
    "OPENAI_API_KEY": "sk",
    "GITHUB_TOKEN": "t",
    "aws_secret_access_key": "s",
    "EDITOR": "vi",
}


def test_by_default_everything_but_keys_secrets_and_tokens() -> None:
    assert child_environment(ENVIRON, ShellEnvironmentPolicy()) == {
        "PATH": "/bin",
        "HOME": "/root",
        "EDITOR": "vi",
    }


def test_core_none_exclude_set_and_include_only() -> None:
    core = ShellEnvironmentPolicy(inherit="core")
    assert child_environment(ENVIRON, core) == {"PATH": "/bin", "HOME": "/root"}
    none = ShellEnvironmentPolicy(inherit="none", set={"CI": "1"})
    assert child_environment(ENVIRON, none) == {"CI": "1"}
    custom = ShellEnvironmentPolicy(
        exclude=("ed*",), set={"MODE": "x"}, include_only=("p*", "mode")
    )
    assert child_environment(ENVIRON, custom) == {"PATH": "/bin", "MODE": "x"}
    keep = ShellEnvironmentPolicy(ignore_default_excludes=True, include_only=("*KEY*",))
    assert child_environment(ENVIRON, keep) == {
        "OPENAI_API_KEY": "sk",
        "aws_secret_access_key": "s",
    }
