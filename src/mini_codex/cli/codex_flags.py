"""The Codex CLI flags and config keys that Codex's own clients pass to ``exec``, where
mini-codex's effect differs from "the same thing": one place for their rules and their notices.

The official TypeScript SDK (``@openai/codex-sdk``) runs ``CLI exec --experimental-json
[--config k=v]… [--model M] [--sandbox S] [--cd DIR] [--add-dir DIR]… [--skip-git-repo-check]
[--output-schema FILE] [--thread-source S] [--cyber-access-program P] [resume ID] [--image F]…``
(its ``exec.ts``). Every one of them is accepted; where mini-codex does less than Codex, the run
says so once on stderr (a ``warning:`` line) instead of ignoring it silently:

* ``--add-dir DIR``: an extra writable root (``sandbox_workspace_write.writable_roots``), as in
  Codex; under ``read-only`` nothing is writable, so it is reported as having no effect.
* ``--thread-source S``: Codex's classification of new threads; mini-codex records none.
* ``--cyber-access-program P``: a Codex experiment of the OpenAI provider; not supported (the turn
  runs with the server's defaults, as Codex does without the flag).
* config ``web_search`` (the SDK's ``webSearchMode`` / ``webSearchEnabled``): ``"disabled"`` is
  mini-codex's behaviour; ``"cached"`` / ``"live"`` would add Codex's hosted ``web_search`` tool,
  which mini-codex does not offer (no web search happens).

What does not belong here: the flags mini-codex implements the same way (``--experimental-json``
is ``--json``; ``openai_base_url`` and ``CODEX_API_KEY`` are read in ``env.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from mini_codex.config import Config
from mini_codex.errors import MiniCodexError

__all__ = [
    "AddDirOpt",
    "CyberAccessOpt",
    "ThreadSourceOpt",
    "added_dirs_notice",
    "config_notices",
    "flag_notices",
    "run_notices",
    "with_added_dirs",
]

AddDirOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--add-dir",
        help="A directory writable alongside the working directory (repeatable; "
        "workspace-write sandbox).",
    ),
]
ThreadSourceOpt = Annotated[
    str | None,
    typer.Option(
        "--thread-source",
        help="Accepted for Codex compatibility: mini-codex records no thread source (warns).",
    ),
]
CyberAccessOpt = Annotated[
    str | None,
    typer.Option(
        "--cyber-access-program",
        help="Accepted for Codex compatibility: not supported (warns; server defaults apply).",
    ),
]


def with_added_dirs(config: Config, dirs: Sequence[Path]) -> Config:
    """``config`` with ``dirs`` (absolute, existing directories) appended to the writable roots
    of the workspace-write sandbox. A missing directory is refused."""
    if not dirs:
        return config
    roots = list(config.sandbox_workspace_write.writable_roots)
    for given in dirs:
        path = given.expanduser().resolve()
        if not path.is_dir():
            raise MiniCodexError(f"--add-dir {given}: not a directory")
        if str(path) not in roots:
            roots.append(str(path))
    settings = config.sandbox_workspace_write.model_copy(update={"writable_roots": tuple(roots)})
    return config.model_copy(update={"sandbox_workspace_write": settings})


def added_dirs_notice(dirs: Sequence[Path], sandbox_mode: str) -> str | None:
    """The warning for ``--add-dir`` under a sandbox where it changes nothing."""
    if dirs and sandbox_mode == "read-only":
        return "warning: --add-dir has no effect: the sandbox is read-only (nothing is writable)"
    return None


def flag_notices(thread_source: str | None, cyber_access_program: str | None) -> tuple[str, ...]:
    """One warning per accepted-but-unsupported flag that was given."""
    notices: list[str] = []
    if thread_source is not None:
        notices.append(
            f"warning: --thread-source {thread_source!r} is not recorded: mini-codex has no "
            "thread sources"
        )
    if cyber_access_program is not None:
        notices.append(
            f"warning: --cyber-access-program {cyber_access_program!r} is not supported by "
            "mini-codex: the turn runs with the server's defaults"
        )
    return tuple(notices)


def config_notices(config: Config) -> list[str]:
    """Warnings for config values mini-codex accepts but cannot honour (``web_search``)."""
    if config.web_search in (None, "disabled"):
        return []
    return [
        f'warning: web_search = "{config.web_search}" is not supported: mini-codex does not '
        "offer Codex's hosted web_search tool, so the model gets no web search"
    ]


def run_notices(
    flags: Sequence[str], config: Config, add_dirs: Sequence[Path], sandbox_mode: str
) -> list[str]:
    """Every warning of a run, in order: the flags', the config's, ``--add-dir``'s."""
    notice = added_dirs_notice(add_dirs, sandbox_mode)
    return [*flags, *config_notices(config), *([notice] if notice is not None else [])]
