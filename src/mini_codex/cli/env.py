"""Everything the CLI takes from the environment: home, config file, API keys, shell, timezone.

The only module (with ``main.py``) that reads ``os.environ``; it hands plain values to the library.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from mini_codex.config import Config, load_config
from mini_codex.errors import ConfigError

HOME_ENV = "MINI_CODEX_HOME"


def mini_codex_home() -> Path:
    """``$MINI_CODEX_HOME``, default ``~/.mini-codex``."""
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else Path.home() / ".mini-codex"


def load_effective_config(
    home: Path, overrides: list[str], *, profile: str | None = None, warn: bool = True
) -> Config:
    """The config file + ``--profile`` + ``-c`` overrides; unknown keys (of the file or of the
    overrides) are reported on stderr as one warning line, never fatal."""
    path = home / "config.toml"
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    config = load_config(text, overrides, source=str(path), profile=profile)
    unknown = config.unknown_keys()
    if warn and unknown:
        sys.stderr.write(f"warning: unknown config keys ignored: {', '.join(unknown)}\n")
    return config


def user_shell() -> str:
    shell = os.environ.get("SHELL", "")
    return shell if shell and os.path.isabs(shell) else "/bin/bash"


def local_timezone() -> str:
    """IANA name of the local timezone (``TZ``, ``/etc/timezone``, ``/etc/localtime``), else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz:
        return tz
    try:
        name = Path("/etc/timezone").read_text(encoding="utf-8").strip()
        if name:
            return name
    except OSError:
        pass
    try:
        target = os.readlink("/etc/localtime")
        marker = "zoneinfo/"
        if marker in target:
            return target.split(marker, 1)[1]
    except OSError:
        pass
    return tz or "Etc/UTC"


def child_environment(config: Config) -> dict[str, str]:
    """The environment tool commands get: ``[shell_environment_policy]`` applied to ours (by
    default everything but names containing KEY, SECRET or TOKEN)."""
    from mini_codex.policy.environment import child_environment as apply_policy

    return apply_policy(os.environ, config.shell_environment_policy)


def stdin_is_terminal() -> bool:
    """Whether someone can be asked on the terminal (``exec``'s approval prompts)."""
    try:
        return os.isatty(0)
    except OSError:
        return False


def process_environment() -> dict[str, str]:
    """The whole environment, for config keys that name variables (MCP ``bearer_token_env_var``,
    ``env_vars``); the library reads only the variables a config names."""
    return dict(os.environ)


@dataclass(frozen=True)
class ProviderChoice:
    provider: str
    """Short provider name for the registry (``openai``, ``chat``, ``scripted``)."""
    provider_name: str
    """The ``[model_providers.NAME]`` key (or ``openai``)."""
    api_key: str | None
    base_url: str | None
    organization: str | None = None
    """``OPENAI_ORG_ID``: sent as ``OpenAI-Organization`` (as the ``openai`` SDK did)."""
    project: str | None = None
    """``OPENAI_PROJECT_ID``: sent as ``OpenAI-Project``."""
    key_env: str = "OPENAI_API_KEY"
    """The variable the key came from (named in errors about the key)."""


CODEX_API_KEY_ENV = "CODEX_API_KEY"


def api_key_for(config: Config, *, codex_api_key: bool = False) -> ProviderChoice:
    """The provider of ``config.model_provider`` and its key. The built-in ``openai`` provider
    takes its base URL from config ``openai_base_url``, else ``OPENAI_BASE_URL``; its key from
    ``CODEX_API_KEY`` when ``codex_api_key`` (the non-interactive runs: ``exec``, ``exec
    resume``, ``resume PROMPT``, ``compact``, as Codex's ``exec`` reads it) and it is set, else
    ``OPENAI_API_KEY``. A ``[model_providers.NAME]`` table reads its ``env_key`` only."""
    from mini_codex.models.registry import provider_for_wire_api

    name = config.model_provider
    table = config.model_providers.get(name)
    if table is None:
        if name != "openai":
            known = ", ".join(sorted(["openai", *config.model_providers])) or "openai"
            raise ConfigError(f"model_provider {name!r} is not configured (known: {known})")
        codex_key = os.environ.get(CODEX_API_KEY_ENV) if codex_api_key else None
        return ProviderChoice(
            "openai",
            "openai",
            codex_key or os.environ.get("OPENAI_API_KEY"),
            config.openai_base_url or os.environ.get("OPENAI_BASE_URL"),
            os.environ.get("OPENAI_ORG_ID"),
            os.environ.get("OPENAI_PROJECT_ID"),
            key_env=CODEX_API_KEY_ENV if codex_key else "OPENAI_API_KEY",
        )
    key = None
    if table.env_key:
        key = os.environ.get(table.env_key)
        if not key:
            raise ConfigError(
                f"model provider {name!r} needs the environment variable {table.env_key}"
            )
    return ProviderChoice(
        provider_for_wire_api(table.wire_api),
        name,
        key,
        table.base_url,
        os.environ.get("OPENAI_ORG_ID"),
        os.environ.get("OPENAI_PROJECT_ID"),
    )
