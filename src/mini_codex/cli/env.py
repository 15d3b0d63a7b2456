"""Everything the CLI takes from the process environment, handed to ``mini_codex.host`` as plain
values: :func:`host_environment` (home, cwd, shell, timezone, the variables) and the config.

The only module (with ``main.py``) that reads ``os.environ``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mini_codex.config import Config
from mini_codex.host.config import load_host_config
from mini_codex.host.environment import HOME_ENV, HostEnvironment

__all__ = [
    "HOME_ENV",
    "host_environment",
    "load_effective_config",
    "mini_codex_home",
    "stdin_is_terminal",
]


def host_environment() -> HostEnvironment:
    """This process's environment: ``$MINI_CODEX_HOME``, ``$SHELL``, ``$TZ``, the variables."""
    return HostEnvironment.from_variables(os.environ, Path.cwd(), Path.home())


def mini_codex_home() -> Path:
    """``$MINI_CODEX_HOME``, default ``~/.mini-codex``."""
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else Path.home() / ".mini-codex"


def _warn(line: str) -> None:
    sys.stderr.write(line + "\n")


def load_effective_config(
    home: Path, overrides: list[str], *, profile: str | None = None, warn: bool = True
) -> Config:
    """The config file + ``--profile`` + ``-c`` overrides; unknown keys (of the file or of the
    overrides) are reported on stderr as one warning line, never fatal."""
    return load_host_config(home, overrides, profile=profile, warn=_warn if warn else None)


def stdin_is_terminal() -> bool:
    """Whether someone can be asked on the terminal (``exec``'s approval prompts)."""
    try:
        return os.isatty(0)
    except OSError:
        return False
