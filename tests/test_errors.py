"""``errors.py`` draws the whole exception tree: every ``MiniCodexError`` subclass, under its
parent."""

from __future__ import annotations

import importlib
import pkgutil
import re

import mini_codex
from mini_codex import errors
from mini_codex.errors import MiniCodexError

OPTIONAL = ("mini_codex.batch.ray_executor",)
"""Modules whose optional dependency may be missing (their errors are drawn all the same)."""


def every_subclass() -> set[type[MiniCodexError]]:
    for module in pkgutil.walk_packages(mini_codex.__path__, "mini_codex."):
        try:
            importlib.import_module(module.name)
        except ImportError:
            assert module.name in OPTIONAL, module.name
    found: set[type[MiniCodexError]] = set()
    pending: list[type[MiniCodexError]] = [MiniCodexError]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found and sub.__module__.startswith("mini_codex."):
                found.add(sub)
                pending.append(sub)
    return found


def drawn_tree() -> dict[str, str]:
    """Each drawn class -> the class drawn as its parent (the root -> "")."""
    drawing = (errors.__doc__ or "").split("::", 1)[1]
    parents: dict[str, str] = {}
    path: list[tuple[int, str]] = []  # (column of the name, name) from the root down
    for line in drawing.splitlines():
        match = re.search(r"(?:── )?([A-Z]\w+)", line)
        if match is None:
            continue
        column, name = match.start(1), match.group(1)
        while path and path[-1][0] >= column:
            path.pop()
        assert name not in parents, f"{name} is drawn twice"
        parents[name] = path[-1][1] if path else ""
        path.append((column, name))
    return parents


def test_every_error_class_is_drawn_under_its_parent() -> None:
    tree = drawn_tree()
    classes = every_subclass()
    assert len(classes) > 40
    assert sorted(c.__name__ for c in classes if c.__name__ not in tree) == []
    for cls in classes:
        bases = {base.__name__ for base in cls.__mro__[1:]}
        assert tree[cls.__name__] in bases, cls
    assert set(tree) == {c.__name__ for c in classes} | {"MiniCodexError"}
