"""``HostEnvironment``: the values a session takes from the process it runs in.

``cli/`` builds it from ``os.environ`` (:meth:`HostEnvironment.from_variables`); the SDK and batch
build it explicitly, so ``os.environ`` is still read only at the edge. The machine's shell and
timezone come from the user database and ``/etc`` (:func:`machine_shell`, :func:`machine_timezone`),
which is what a front end without an environment of its own reports to the model.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

__all__ = [
    "HOME_ENV",
    "Credentials",
    "HostEnvironment",
    "machine_shell",
    "machine_timezone",
]

HOME_ENV = "MINI_CODEX_HOME"
DEFAULT_SHELL = "/bin/bash"


def machine_shell() -> str:
    """The login shell of the user running this process (the password database), else bash."""
    try:
        shell = pwd.getpwuid(os.getuid()).pw_shell
    except (KeyError, OSError):
        return DEFAULT_SHELL
    return shell if shell and os.path.isabs(shell) and Path(shell).exists() else DEFAULT_SHELL


def machine_timezone(tz: str | None = None) -> str:
    """IANA name of the local timezone: ``tz`` (a ``TZ`` value) when it names a zone, else
    ``/etc/timezone``, else the ``/etc/localtime`` link, else ``tz`` or UTC."""
    tz = (tz or "").lstrip(":")
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


class Credentials(msgspec.Struct, frozen=True):
    """Provider settings given explicitly (the SDK's ``api_key=`` …), instead of variables."""

    api_key: str | None = None
    base_url: str | None = None
    organization: str | None = None
    project: str | None = None


@dataclass(frozen=True)
class HostEnvironment:
    """Everything a session takes from its host process, as plain values."""

    home: Path
    """``$MINI_CODEX_HOME`` (config.toml, sessions, rules, the global AGENTS.md)."""
    cwd: Path
    """The process's working directory (a session's default cwd)."""
    user_home: Path
    """The user's home directory: a resumed session recorded there (or in ``/``) needs a cwd."""
    shell: str = DEFAULT_SHELL
    timezone: str = "Etc/UTC"
    variables: Mapping[str, str] = field(default_factory=dict)
    """The process environment: provider keys, MCP ``env_vars`` and ``bearer_token_env_var``,
    and the base of the tools' environment (``[shell_environment_policy]``)."""
    child_env: Mapping[str, str] | None = None
    """The tools' environment as given (the SDK's ``env``); None applies the config's
    ``shell_environment_policy`` to ``variables``."""
    credentials: Credentials | None = None
    """Explicit provider settings; None reads ``OPENAI_API_KEY`` … from ``variables``."""
    codex_home: Path | None = None
    """Where Codex CLI sessions are looked up (``~/.codex``), when a front end does."""

    @classmethod
    def from_variables(
        cls, variables: Mapping[str, str], cwd: Path, user_home: Path
    ) -> HostEnvironment:
        """The environment of a command-line process (``cli/`` passes ``os.environ``)."""
        value = variables.get(HOME_ENV)
        home = Path(value).expanduser() if value else user_home / ".mini-codex"
        shell = variables.get("SHELL", "")
        return cls(
            home=home,
            cwd=cwd,
            user_home=user_home,
            shell=shell if shell and os.path.isabs(shell) else DEFAULT_SHELL,
            timezone=machine_timezone(variables.get("TZ")),
            variables=dict(variables),
        )

    @classmethod
    def of_machine(
        cls,
        home: Path,
        *,
        child_env: Mapping[str, str] | None = None,
        credentials: Credentials | None = None,
        codex_home: Path | None = None,
    ) -> HostEnvironment:
        """The environment of an embedding process that reads no variables (the SDK): the
        machine's shell and timezone, the given tool environment and credentials."""
        return cls(
            home=home,
            cwd=Path.cwd(),
            user_home=Path.home(),
            shell=machine_shell(),
            timezone=machine_timezone(),
            variables={},
            child_env=dict(child_env) if child_env is not None else {},
            credentials=credentials or Credentials(),
            codex_home=codex_home,
        )
