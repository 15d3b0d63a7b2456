"""The CLI's error boundary: a library error becomes one ``error:`` line and exit code 2.

Every command runs its body through :func:`exit_with`, the interactive UI too, also when its
plain command line is read without typer (``ui_argv.py``): so this module imports no typer. The
exit code leaves as a ``SystemExit``, which typer lets through unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

from mini_codex.errors import MiniCodexError

__all__ = ["exit_with"]


def exit_with(run: Callable[[], int]) -> NoReturn:
    """Run ``run`` and exit with its code; a ``MiniCodexError`` is one line and exit code 2."""
    try:
        code = run()
    except MiniCodexError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.stderr.flush()
        raise SystemExit(2) from None
    raise SystemExit(code)
