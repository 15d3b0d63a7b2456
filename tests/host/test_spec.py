"""``SessionSpec`` → ``ResolvedSession``: every refusal and rule, as data in, data out."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_codex.config import Config, ModelProviderConfig
from mini_codex.errors import ConfigError, InputError
from mini_codex.host import (
    Credentials,
    HostEnvironment,
    ModelChoice,
    RecordedSession,
    ResolvedSession,
    ResumeRefusedError,
    SessionSpec,
    resolve_session,
)
from mini_codex.protocol import InputImage, InputText, Message
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.tools.images import ImageError

PNG = b"\x89PNG\r\n\x1a\nfake"


def host(tmp_path: Path, **variables: str) -> HostEnvironment:
    (tmp_path / "proc").mkdir(exist_ok=True)
    (tmp_path / "user").mkdir(exist_ok=True)
    return HostEnvironment(
        home=tmp_path / "home",
        cwd=tmp_path / "proc",
        user_home=tmp_path / "user",
        variables=variables,
    )


def test_a_new_session_with_everything_given(tmp_path: Path) -> None:
    env = host(tmp_path, OPENAI_API_KEY="sk-1", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    work = tmp_path / "work"
    work.mkdir()
    image = tmp_path / "a.png"
    image.write_bytes(PNG)
    spec = SessionSpec(
        cwd=work,
        model="gpt-test",
        sandbox="read-only",
        approval="never",
        prompt="look",
        images=(image,),
        persist=False,
    )
    config = Config()
    assert resolve_session(spec, config, env) == ResolvedSession(
        config=config,
        cwd=work.resolve(),
        model=ModelChoice(
            model="gpt-test",
            provider_name="openai",
            provider=ModelProviderConfig(
                name="OpenAI", base_url="http://127.0.0.1:9/v1", env_key="OPENAI_API_KEY"
            ),
            api_key="sk-1",
        ),
        sandbox=SandboxPolicy.read_only(),
        approval_policy="never",
        resume_path=None,
        input=[
            Message(
                role="user",
                content=[
                    InputText(text="look"),
                    InputImage(image_url="data:image/png;base64,iVBORw0KGgpmYWtl"),
                ],
            )
        ],
        persist=False,
    )


def test_defaults_come_from_the_process_and_the_config(tmp_path: Path) -> None:
    env = host(tmp_path)
    resolved = resolve_session(SessionSpec(prompt="hi"), Config(model="m1"), env)
    assert (resolved.cwd, resolved.model.model, resolved.sandbox, resolved.input) == (
        env.cwd.resolve(),
        "m1",
        None,
        "hi",
    )


def test_scripted_models_record_the_slug_scripted(tmp_path: Path) -> None:
    script = tmp_path / "x.jsonl"
    script.write_text('{"output": [{"type": "message", "content": "hi"}]}\n')
    resolved = resolve_session(SessionSpec(model=f"scripted:{script}"), Config(), host(tmp_path))
    assert (resolved.model.slug, resolved.model.model) == ("scripted", f"scripted:{script}")


def test_a_script_that_cannot_be_read_is_refused_before_anything_opens(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(ConfigError) as refused:
        resolve_session(SessionSpec(model=f"scripted:{missing}"), Config(), host(tmp_path))
    assert str(refused.value) == (
        f"cannot read model script '{missing}': No such file or directory"
    )


def test_explicit_credentials_win_over_variables(tmp_path: Path) -> None:
    env = HostEnvironment(
        home=tmp_path,
        cwd=tmp_path,
        user_home=tmp_path / "u",
        variables={"OPENAI_API_KEY": "from-env"},
        credentials=Credentials(api_key="given", organization="org"),
    )
    choice = resolve_session(SessionSpec(), Config(), env).model
    assert (choice.api_key, choice.organization, choice.provider) == (
        "given",
        "org",
        ModelProviderConfig(name="OpenAI", base_url=None, env_key="OPENAI_API_KEY"),
    )


def test_a_resumed_session_runs_where_it_was_recorded(tmp_path: Path) -> None:
    recorded = tmp_path / "there"
    recorded.mkdir()
    spec = SessionSpec(resume=RecordedSession(tmp_path / "r.jsonl", "t1", recorded))
    resolved = resolve_session(spec, Config(), host(tmp_path))
    assert (resolved.cwd, resolved.resume_path) == (recorded.resolve(), tmp_path / "r.jsonl")


@pytest.mark.parametrize("where", ["user", "/"])
def test_resuming_in_the_home_directory_or_the_root_is_refused(tmp_path: Path, where: str) -> None:
    env = host(tmp_path)
    recorded = env.user_home if where == "user" else Path("/")
    spec = SessionSpec(resume=RecordedSession(tmp_path / "r.jsonl", "t1", recorded))
    with pytest.raises(ResumeRefusedError) as refused:
        resolve_session(spec, Config(), env)
    assert str(refused.value) == (
        f"the session was recorded in {recorded}; resuming there would make it the sandbox's "
        f"writable root. Pass --cd DIR (--cd {recorded} to confirm)."
    )
    # An explicit cwd confirms it.
    confirmed = resolve_session(SessionSpec(cwd=recorded, resume=spec.resume), Config(), env)
    assert confirmed.cwd == recorded.resolve()


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        (
            SessionSpec(cwd=Path("/nonexistent-dir")),
            InputError,
            "--cd /nonexistent-dir: not a directory",
        ),
        (
            SessionSpec(sandbox="open"),
            InputError,
            "unknown --sandbox 'open' (read-only, workspace-write, danger-full-access)",
        ),
        (
            SessionSpec(approval="always"),
            InputError,
            "unknown --ask-for-approval 'always' (untrusted, on-failure, on-request, never)",
        ),
        (SessionSpec(prompt="x", images=(Path("/nonexistent.png"),)), ImageError, None),
    ],
)
def test_bad_options_are_refused_with_one_line(
    tmp_path: Path, spec: SessionSpec, error: type[Exception], message: str | None
) -> None:
    with pytest.raises(error) as refused:
        resolve_session(spec, Config(), host(tmp_path))
    if message is not None:
        assert str(refused.value) == message
    assert "\n" not in str(refused.value)


def test_a_provider_that_is_not_configured_or_lacks_its_key_is_refused(tmp_path: Path) -> None:
    env = host(tmp_path)
    with pytest.raises(ConfigError, match=r"model_provider 'nope' is not configured"):
        resolve_session(SessionSpec(), Config(model_provider="nope"), env)
    config = Config(
        model_provider="local",
        model_providers={"local": ModelProviderConfig(env_key="LOCAL_KEY", wire_api="chat")},
    )
    with pytest.raises(ConfigError) as refused:
        resolve_session(SessionSpec(), config, env)
    assert str(refused.value) == "model provider 'local' needs the environment variable LOCAL_KEY"
    keyed = resolve_session(SessionSpec(), config, host(tmp_path, LOCAL_KEY="k"))
    assert (keyed.model.default_provider, keyed.model.api_key) == ("chat", "k")


def test_the_first_problem_in_the_fixed_order_is_reported(tmp_path: Path) -> None:
    spec = SessionSpec(cwd=Path("/nonexistent-dir"), sandbox="open", approval="always")
    with pytest.raises(InputError, match="--cd"):
        resolve_session(spec, Config(), host(tmp_path))
    with pytest.raises(InputError, match="--sandbox"):
        resolve_session(SessionSpec(sandbox="open", approval="always"), Config(), host(tmp_path))


def test_the_host_environment_of_a_command_line(tmp_path: Path) -> None:
    env = HostEnvironment.from_variables(
        {"MINI_CODEX_HOME": str(tmp_path / "h"), "SHELL": "/bin/zsh", "TZ": "Europe/Paris"},
        tmp_path,
        tmp_path / "u",
    )
    assert (env.home, env.shell, env.timezone) == (tmp_path / "h", "/bin/zsh", "Europe/Paris")
    default = HostEnvironment.from_variables({"SHELL": "zsh"}, tmp_path, tmp_path / "u")
    assert (default.home, default.shell) == (tmp_path / "u" / ".mini-codex", "/bin/bash")
