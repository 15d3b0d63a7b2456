"""Where environments come from: ``$MINI_CODEX_HOME/environments.toml`` in Codex's schema, or
``MINI_CODEX_EXEC_SERVER_URL`` with ``CODEX_EXEC_SERVER_URL``'s meaning.

``environments.toml`` (strict: an unknown key, a bad id or a missing field is one clear error)::

    default = "local"          # an id, or "none"
    include_local = true       # default true
    [[environments]]
    id = "worker"              # [A-Za-z0-9_-], at most 64 characters, unique, not local/remote/none
    url = "ws://10.0.0.5:4500" # exactly one of url (ws:// or wss://) or program
    connect_timeout_sec = 5    # url only
    initialize_timeout_sec = 10
    [[environments]]
    id = "devbox"
    program = "ssh"
    args = ["devbox", "mini-codex exec-server --listen stdio"]
    env = { TERM = "dumb" }    # program only, like args and cwd (relative: against the home)

Without the file: the variable unset or empty means only ``local``; ``none`` means no
environment at all (no shell or file tools); a ``ws://`` URL means only ``remote`` at that URL.
The turn's selections are the default id first, then every other id, in file order.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from mini_codex.errors import ConfigError

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DEFAULT_INITIALIZE_TIMEOUT_S",
    "EnvironmentsConfig",
    "ExecutorSpec",
    "load_environments",
    "parse_environments",
]

DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_INITIALIZE_TIMEOUT_S = 10.0
LOCAL_ID = "local"
REMOTE_ID = "remote"
_RESERVED = {"local", "remote", "none"}
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TOP_KEYS = {"default", "include_local", "environments"}
MAX_CAPABILITY_ROOTS = 256
"""Codex's ``MAX_SELECTED_CAPABILITY_ROOTS``."""
_ENV_KEYS = {
    "capability_roots",
    "id",
    "url",
    "program",
    "args",
    "env",
    "cwd",
    "connect_timeout_sec",
    "initialize_timeout_sec",
}


class ExecutorSpec(msgspec.Struct, frozen=True):
    """One remote environment: a websocket URL or a stdio program."""

    id: str
    url: str | None = None
    program: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    cwd: str | None = None
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    initialize_timeout_s: float = DEFAULT_INITIALIZE_TIMEOUT_S
    capability_roots: tuple[str, ...] = ()
    """Skill folders on the executor (absolute paths there), discovered through ``fs/*`` when it
    is ready (mini-codex's key; Codex takes them from ``thread/start.selectedCapabilityRoots``)."""


class EnvironmentsConfig(msgspec.Struct, frozen=True):
    default: str | None
    """The default (primary when ready) environment id; None: no environments."""
    include_local: bool
    executors: tuple[ExecutorSpec, ...] = ()
    startup_grace_s: float = 10.0
    """How long the session's first step waits for executors still connecting (each attempt is
    bounded by its own connect/initialize timeouts); later steps never wait."""

    @classmethod
    def local_only(cls) -> EnvironmentsConfig:
        return cls(default=LOCAL_ID, include_local=True)

    def ids(self) -> list[str]:
        """The default selection order: the default first, then every other id."""
        if self.default is None:
            return []
        known = ([LOCAL_ID] if self.include_local else []) + [e.id for e in self.executors]
        return [self.default, *(env_id for env_id in known if env_id != self.default)]

    def executor(self, env_id: str) -> ExecutorSpec | None:
        return next((spec for spec in self.executors if spec.id == env_id), None)

    @property
    def is_local_only(self) -> bool:
        return self.ids() == [LOCAL_ID]


def _fail(where: str, message: str) -> ConfigError:
    return ConfigError(f"{where}: {message}")


def _number(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _fail(where, f"{key} must be a positive number of seconds, got {value!r}")
    return float(value)


def _executor(where: str, index: int, raw: Any, home: Path) -> ExecutorSpec:
    here = f"{where}: environments[{index}]"
    if not isinstance(raw, dict):
        raise _fail(here, "must be a table")
    unknown = sorted(set(raw) - _ENV_KEYS)
    if unknown:
        raise _fail(here, f"unknown key {unknown[0]!r}")
    env_id = raw.get("id")
    if not isinstance(env_id, str) or not _ID.match(env_id):
        raise _fail(here, f"id must match [A-Za-z0-9_-] (1-64 characters), got {env_id!r}")
    if env_id.lower() in _RESERVED:
        raise _fail(here, f"id {env_id!r} is reserved")
    url, program = raw.get("url"), raw.get("program")
    if (url is None) == (program is None):
        raise _fail(here, f"environment {env_id!r} needs exactly one of url or program")
    if url is not None and (not isinstance(url, str) or not url.startswith(("ws://", "wss://"))):
        raise _fail(here, f"url must start with ws:// or wss://, got {url!r}")
    if program is not None and (not isinstance(program, str) or not program):
        raise _fail(here, "program must be a non-empty string")
    for key in ("args", "env", "cwd"):
        if key in raw and program is None:
            raise _fail(here, f"{key} requires program")
    if "connect_timeout_sec" in raw and url is None:
        raise _fail(here, "connect_timeout_sec requires url")
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise _fail(here, "args must be a list of strings")
    env = raw.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise _fail(here, "env must be a table of strings")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _fail(here, "cwd must be a string")
    roots = raw.get("capability_roots", [])
    if not isinstance(roots, list) or not all(
        isinstance(root, str) and root.startswith("/") for root in roots
    ):
        raise _fail(here, "capability_roots must be a list of absolute paths")
    if len(roots) > MAX_CAPABILITY_ROOTS:
        raise _fail(here, f"more than {MAX_CAPABILITY_ROOTS} capability_roots")
    return ExecutorSpec(
        id=env_id,
        url=url,
        program=program,
        args=tuple(args),
        env=dict(env),
        cwd=str(home / cwd) if cwd is not None else None,
        connect_timeout_s=_number(
            here, "connect_timeout_sec", raw.get("connect_timeout_sec", DEFAULT_CONNECT_TIMEOUT_S)
        ),
        initialize_timeout_s=_number(
            here,
            "initialize_timeout_sec",
            raw.get("initialize_timeout_sec", DEFAULT_INITIALIZE_TIMEOUT_S),
        ),
        capability_roots=tuple(roots),
    )


def parse_environments(data: Mapping[str, Any], *, home: Path, where: str) -> EnvironmentsConfig:
    """Validate a parsed ``environments.toml``."""
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _fail(where, f"unknown key {unknown[0]!r}")
    include_local = data.get("include_local", True)
    if not isinstance(include_local, bool):
        raise _fail(where, "include_local must be true or false")
    raw_envs = data.get("environments", [])
    if not isinstance(raw_envs, list):
        raise _fail(where, "environments must be an array of tables ([[environments]])")
    executors = tuple(_executor(where, i, raw, home) for i, raw in enumerate(raw_envs))
    seen: set[str] = set()
    for spec in executors:
        if spec.id in seen:
            raise _fail(where, f"duplicate environment id {spec.id!r}")
        seen.add(spec.id)
    known = ([LOCAL_ID] if include_local else []) + [spec.id for spec in executors]
    default = data.get("default", known[0] if known else "none")
    if not isinstance(default, str):
        raise _fail(where, 'default must be an environment id or "none"')
    if default.lower() == "none":
        return EnvironmentsConfig(None, include_local, executors)
    if default not in known:
        raise _fail(where, f"default {default!r} is not a configured environment")
    return EnvironmentsConfig(default, include_local, executors)


def load_environments(home: Path, exec_server_url: str | None) -> EnvironmentsConfig:
    """The file when it exists (strict), else ``MINI_CODEX_EXEC_SERVER_URL``'s meaning."""
    path = home / "environments.toml"
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        text = None
    except OSError as exc:
        raise _fail(str(path), f"cannot read: {exc.strerror}") from exc
    if text is not None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _fail(str(path), f"not valid TOML: {exc}") from exc
        return parse_environments(data, home=home, where=str(path))
    url = (exec_server_url or "").strip()
    if not url:
        return EnvironmentsConfig.local_only()
    if url.lower() == "none":
        return EnvironmentsConfig(None, include_local=False)
    if not url.startswith(("ws://", "wss://")):
        raise ConfigError(f"MINI_CODEX_EXEC_SERVER_URL must be a ws:// URL or none, got {url!r}")
    return EnvironmentsConfig(REMOTE_ID, False, (ExecutorSpec(id=REMOTE_ID, url=url),))
