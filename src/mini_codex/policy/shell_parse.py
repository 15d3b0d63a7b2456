"""Parse a ``bash -c``/``bash -lc`` script into plain commands with tree-sitter-bash (as Codex).

A script is "plain" when it is only simple commands (words, single- or double-quoted strings
without expansions, numbers) joined by ``&&``, ``||``, ``;`` or ``|``. Anything else —
substitutions, expansions, redirections, assignments, subshells, functions, control flow, parse
errors — makes the script not plain (``None``), so callers treat it as one opaque command.
Pure (parsing is in memory); the parser is created lazily and reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

__all__ = ["parse_plain_commands", "shell_script_of"]

_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_JOINERS = frozenset({"&&", "||", ";", "|", "\n"})
_CONTAINERS = frozenset({"program", "list", "pipeline"})


@cache
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def shell_script_of(argv: Sequence[str]) -> str | None:
    """The script of ``[<shell>, -c|-lc, SCRIPT]`` (any path to bash/sh/zsh/dash), else None."""
    if len(argv) != 3 or argv[1] not in ("-c", "-lc"):
        return None
    name = argv[0].rsplit("/", 1)[-1]
    return argv[2] if name in _SHELLS else None


def _word(node: Any) -> str | None:
    text = node.text.decode("utf-8", "replace")
    match node.type:
        case "word" | "number":
            return str(text)
        case "raw_string":
            return str(text[1:-1])
        case "string":
            parts = [c for c in node.children if c.type not in ('"',)]
            if all(c.type == "string_content" for c in parts):
                return "".join(c.text.decode("utf-8", "replace") for c in parts)
            return None
        case _:
            return None


def _command(node: Any) -> list[str] | None:
    words: list[str] = []
    for child in node.children:
        if child.type == "command_name":
            if child.child_count != 1:
                return None
            target = child.children[0]
        else:
            target = child
        word = _word(target)
        if word is None:
            return None
        words.append(word)
    return words or None


def _collect(node: Any, out: list[list[str]]) -> bool:
    if node.type == "command":
        words = _command(node)
        if words is None:
            return False
        out.append(words)
        return True
    if node.type in _CONTAINERS:
        for child in node.children:
            if child.type in _JOINERS or child.type == "comment":
                continue
            if not _collect(child, out):
                return False
        return True
    return False


def parse_plain_commands(script: str) -> list[list[str]] | None:
    """The commands of a plain script, in order; None when the script is not plain."""
    tree = _parser().parse(script.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        return None
    commands: list[list[str]] = []
    if not _collect(root, commands) or not commands:
        return None
    return commands
