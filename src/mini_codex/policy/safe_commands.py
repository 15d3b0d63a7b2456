"""Known-safe (read-only) commands: what ``untrusted`` runs without asking (Codex semantics).

A command is known safe when it is one of a small set of read-only programs with arguments
that cannot write or execute anything (``find`` without ``-exec``/``-delete``/``-fprint…``,
``rg`` without ``--pre``/``--search-zip``, ``git`` read-only subcommands, ``sed -n Np``), or a
``bash -c``/``-lc`` script whose every plain command (``shell_parse``) is known safe. Anything
the parser cannot reduce to plain commands is not known safe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mini_codex.policy.shell_parse import parse_plain_commands, shell_script_of

__all__ = ["is_known_safe_command"]

_ALWAYS_SAFE = frozenset(
    {
        "cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl",
        "paste", "pwd", "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc",
        "which", "whoami",
    }
)  # fmt: skip
_FIND_UNSAFE = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf"}
)
_RG_UNSAFE_PREFIXES = ("--pre", "--hostname-bin", "--search-zip", "-z")
_GIT_READ_ONLY = frozenset({"status", "log", "diff", "show", "branch"})
_SED_PRINT = re.compile(r"^\d+(,\d+)?p$")


def _is_safe_plain(argv: Sequence[str]) -> bool:
    if not argv:
        return False
    program = argv[0].rsplit("/", 1)[-1] if argv[0].startswith("/") else argv[0]
    args = list(argv[1:])
    if program in _ALWAYS_SAFE:
        return True
    match program:
        case "find":
            return not any(arg in _FIND_UNSAFE for arg in args)
        case "rg":
            return not any(
                arg == p or arg.startswith(p + "=") for arg in args for p in _RG_UNSAFE_PREFIXES
            )
        case "git":
            return (
                bool(args)
                and args[0] in _GIT_READ_ONLY
                and not any(
                    arg.startswith("--output") or arg in ("-o", "--ext-diff") for arg in args
                )
            )
        case "sed":
            return len(args) in (2, 3) and args[0] == "-n" and bool(_SED_PRINT.match(args[1]))
        case _:
            return False


def is_known_safe_command(argv: Sequence[str]) -> bool:
    """Whether ``argv`` only reads (see the module docstring)."""
    script = shell_script_of(argv)
    if script is None:
        return _is_safe_plain(argv)
    commands = parse_plain_commands(script)
    return commands is not None and all(_is_safe_plain(command) for command in commands)
