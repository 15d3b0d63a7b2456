"""The one config loader: ``$HOME/config.toml`` + ``--profile`` + ``-c`` overrides + keys given in
code, with unknown keys reported once through ``warn`` (never fatal).

Every front end loads its config here: ``exec``/``resume``/``compact`` and the UI (``-c``,
``--profile``), the SDK (``Codex(**config_overrides)`` and the thread's settings), batch (the
driver's ``-c`` plus each task's table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mini_codex.config import Config, load_config
from mini_codex.errors import ConfigError

__all__ = ["config_path", "load_host_config", "read_config_text", "unknown_keys_warning"]


def config_path(home: Path) -> Path:
    return home / "config.toml"


def read_config_text(home: Path) -> str | None:
    """The text of ``home/config.toml``, None when there is none."""
    path = config_path(home)
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc


def unknown_keys_warning(config: Config) -> str | None:
    """The one warning line about unknown keys (of the file or of the overrides), if any."""
    unknown = config.unknown_keys()
    return f"warning: unknown config keys ignored: {', '.join(unknown)}" if unknown else None


def load_host_config(
    home: Path,
    overrides: list[str] | None = None,
    *,
    profile: str | None = None,
    extra: Mapping[str, Any] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Config:
    """The effective config of a session opened with ``home`` (see the module docstring);
    ``extra`` keys (given in code) win over the file, the profile and the overrides."""
    path = config_path(home)
    config = load_config(
        read_config_text(home),
        list(overrides or []),
        source=str(path),
        profile=profile,
        extra=dict(extra) if extra else None,
    )
    warning = unknown_keys_warning(config)
    if warn is not None and warning is not None:
        warn(warning)
    return config
