"""The ``mini-codex`` console entry point: signal handling first, then the application.

The handlers (``signals.py``) are installed before anything heavy is imported; then the
interactive UI runs if the command line is a plain UI one (``ui_argv.py``: typer and pydantic
would delay the composer by a tenth of a second), else the typer application (``main.py``). A
signal that surfaces as an exception (wrapped in a task group, turned into exit code 130 by
typer, or behind a ``RuntimeError``) ends the process with the one line and exit code 128 +
signal. Nothing else belongs here.
"""

from __future__ import annotations

import gc
import signal
import sys

from mini_codex.cli.signals import (
    SignalExit,
    exit_for,
    install,
    mark_owner,
    pause_collection,
    received,
    settle_heap,
)

__all__ = ["SignalExit", "install", "main", "settle_heap"]

launching = False
"""True once :func:`main` runs: the process is the ``mini-codex`` command (``cli/main.py``
registers only the sub-command it names, none for the interactive UI)."""


def _first_interrupt(group: BaseExceptionGroup[BaseException]) -> KeyboardInterrupt | None:
    for exc in group.exceptions:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = _first_interrupt(exc)
            if found is not None:
                return found
    return None


def _signal_behind(exc: BaseException) -> SignalExit | None:
    """The signal an error was raised because of: Python wraps an exception raised in some
    hooks (``__set_name__`` while a dataclass is built during an import) in a ``RuntimeError``
    whose cause is the ``SignalExit``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, SignalExit):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def main() -> None:
    """Run the ``mini-codex`` application with the signal handling above."""
    global launching
    mark_owner()
    pause_collection()  # back on at settle_heap(), once the command's imports are done
    install()
    launching = True  # read by cli/main.py: a command line naming no command is the UI's
    try:
        from mini_codex.cli.ui_argv import run_plain_ui

        run_plain_ui(sys.argv)  # the UI's plain command line, without typer; exits when it ran
        from mini_codex.cli.main import app

        app()
    except KeyboardInterrupt as exc:
        exit_for(exc.signum if isinstance(exc, SignalExit) else signal.SIGINT)
    except BaseExceptionGroup as group:
        # A signal that lands inside a task group (while the session opens) arrives wrapped.
        interrupt = _first_interrupt(group)
        if interrupt is None:
            raise
        exit_for(interrupt.signum if isinstance(interrupt, SignalExit) else signal.SIGINT)
    except SystemExit as exc:
        # typer turns a KeyboardInterrupt inside a command into exit code 130, silently.
        if exc.code == 130 and received():
            exit_for(received()[-1])
        raise
    except Exception as exc:
        cause = _signal_behind(exc)
        if cause is None:
            raise
        exit_for(cause.signum)
    finally:
        # The command is over (its files are closed and flushed). Without this, the collector
        # passes of interpreter shutdown walk every object still alive (the imported modules,
        # a resumed history): 0.15-0.4 s of exit time here, for nothing to collect.
        gc.freeze()
