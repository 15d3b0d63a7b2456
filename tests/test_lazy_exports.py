"""The packages whose ``__init__`` re-exports lazily (``mini_codex._lazy``): every name of
``__all__`` resolves to the object its module defines, the lazy table lists exactly ``__all__``,
and importing one submodule does not import its package's other modules."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

LAZY_PACKAGES = [
    "mini_codex.context",
    "mini_codex.discovery",
    "mini_codex.policy",
    "mini_codex.rollout",
    "mini_codex.sandbox",
    "mini_codex.skills",
    "mini_codex.tools",
    "mini_codex.world_state",
]


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_exported_name_is_its_modules_object(name: str) -> None:
    package = importlib.import_module(name)
    table = package._LAZY_EXPORTS
    assert sorted(table) == sorted(package.__all__)
    for export, module in table.items():
        assert getattr(package, export) is getattr(importlib.import_module(module), export)
    assert dir(package) == sorted(package.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(package, "no_such_name")  # noqa: B009


def test_importing_the_recorder_does_not_import_the_rest_of_rollout() -> None:
    code = (
        "import sys, mini_codex.rollout.recorder\n"
        "print(sorted(m for m in ('mini_codex.rollout.index', 'mini_codex.rollout.resume', "
        "'mini_codex.rollout.replay.verify', 'sqlite3') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
