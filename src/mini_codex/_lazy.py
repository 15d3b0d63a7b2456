"""Lazy re-exports for a package ``__init__``: a name is imported from its module when first used.

A package's ``__init__`` runs before any of its submodules is imported, so an ``__init__`` that
re-exports everything makes ``from mini_codex.rollout.recorder import X`` import the whole
package (the index's sqlite3, the replay fold, msgspec…): start-up paid for modules the command
never uses (issue 30). With ``lazy_exports`` the package keeps its public names and ``__all__``
(type checkers and import-linter read them from an ``if TYPE_CHECKING:`` block), and a name's
module is imported on the first ``package.NAME`` / ``from package import NAME``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for ``namespace`` (the package's ``globals()``)
    that import ``exports[NAME]`` (a module's dotted path) when ``NAME`` is first looked up, and
    keep the value in the namespace (later lookups do not come here). ``dir()`` lists
    ``__all__``; the table is kept as ``_LAZY_EXPORTS`` (for the tests)."""
    package = namespace["__name__"]
    namespace["_LAZY_EXPORTS"] = dict(exports)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(namespace.get("__all__", exports))

    return __getattr__, __dir__
