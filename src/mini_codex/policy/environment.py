"""The environment of the model's commands (Codex ``shell_environment_policy``). Pure.

In order: start from ``inherit`` (``all`` variables, the ``core`` ones, or ``none``); unless
``ignore_default_excludes``, drop every name containing ``KEY``, ``SECRET`` or ``TOKEN``
(case-insensitive), so ``OPENAI_API_KEY`` and provider keys never reach a command; drop names
matching an ``exclude`` glob; add ``set``; finally, when ``include_only`` is not empty, keep only
names matching one of its globs. Globs are case-insensitive ``fnmatch`` patterns.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping

from mini_codex.config import ShellEnvironmentPolicy

__all__ = ["CORE_VARIABLES", "DEFAULT_EXCLUDES", "child_environment"]

CORE_VARIABLES = frozenset(
    {"HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG",
     "LC_ALL", "TERM"}
)  # fmt: skip
DEFAULT_EXCLUDES = ("*KEY*", "*SECRET*", "*TOKEN*")


def _matches(name: str, patterns: Iterable[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def child_environment(environ: Mapping[str, str], policy: ShellEnvironmentPolicy) -> dict[str, str]:
    """The environment a command gets under ``policy`` (see the module docstring)."""
    match policy.inherit:
        case "all":
            env = dict(environ)
        case "core":
            env = {k: v for k, v in environ.items() if k in CORE_VARIABLES}
        case "none":
            env = {}
    if not policy.ignore_default_excludes:
        env = {k: v for k, v in env.items() if not _matches(k, DEFAULT_EXCLUDES)}
    if policy.exclude:
        env = {k: v for k, v in env.items() if not _matches(k, policy.exclude)}
    env.update(policy.set)
    if policy.include_only:
        env = {k: v for k, v in env.items() if _matches(k, policy.include_only)}
    return env
