"""The ``mini-codex`` console entry point: signal handling first, then the application.

What belongs here: the process-level answer to Ctrl-C and SIGTERM outside a running turn. The
handlers are installed before anything heavy is imported (this module imports only the standard
library), so a signal during start-up (imports, config, opening the session) or shutdown ends
the process with one line on stderr and exit code 128 + signal (130 for SIGINT, 143 for
SIGTERM), never a traceback. While a turn runs, ``run.py`` takes both signals over and
interrupts the turn through the session, so the abort is recorded; when it lets go, it
reinstalls these handlers (:func:`install`).

What does not belong here: anything else; the commands live in ``main.py``.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

__all__ = ["SignalExit", "install", "main", "settle_heap"]

_NAMES: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


class SignalExit(KeyboardInterrupt):
    """Raised by the handlers; a ``KeyboardInterrupt`` so library code unwinds as for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_received: list[int] = []


def _handler(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise SignalExit(signum)


def install() -> None:
    """Make SIGINT and SIGTERM raise :class:`SignalExit` (main thread only)."""
    signal.signal(signal.SIGINT, _handler)
    signal.signal(signal.SIGTERM, _handler)
    if sys.unraisablehook is not _unraisable:
        global _previous_hook
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable


_previous_hook = sys.__unraisablehook__


def _unraisable(unraisable: UnraisableHookArgs) -> None:
    """A signal that lands in a callback whose exceptions Python swallows (a weakref callback,
    ``__del__``) would print "Exception ignored" with a traceback and be lost: end the process
    right there instead, with the one line. What was recorded is already written (the rollout
    writer does not buffer)."""
    if not isinstance(unraisable.exc_value, SignalExit):
        _previous_hook(unraisable)
        return
    _say(unraisable.exc_value.signum)
    os._exit(128 + unraisable.exc_value.signum)


def _say(signum: int) -> None:
    # From here on nothing may interrupt the exit: a second signal is ignored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        sys.stderr.write(f"mini-codex: {_NAMES.get(signum, 'stopped by a signal')}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _exit_for(signum: int) -> NoReturn:
    _say(signum)
    sys.exit(128 + signum)


_owner = False
"""Whether this process is the ``mini-codex`` command (``main``), not a host or a test that runs
the CLI in-process: only then may the CLI tune process-wide state such as the collector."""


def settle_heap() -> None:
    """Move every object alive now out of the cyclic collector's reach (``gc.freeze``), when
    this process is the ``mini-codex`` command. Called once the heavy imports are done: their
    ~100k long-lived objects are then not walked again by each full collection (a resumed
    session's first turn paid ~0.07 s per collection for them)."""
    if _owner:
        gc.freeze()


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
    global _owner
    _owner = True
    install()
    try:
        from mini_codex.cli.main import app

        app()
    except KeyboardInterrupt as exc:
        _exit_for(exc.signum if isinstance(exc, SignalExit) else signal.SIGINT)
    except BaseExceptionGroup as group:
        # A signal that lands inside a task group (while the session opens) arrives wrapped.
        interrupt = _first_interrupt(group)
        if interrupt is None:
            raise
        _exit_for(interrupt.signum if isinstance(interrupt, SignalExit) else signal.SIGINT)
    except SystemExit as exc:
        # typer turns a KeyboardInterrupt inside a command into exit code 130, silently.
        if exc.code == 130 and _received:
            _exit_for(_received[-1])
        raise
    except Exception as exc:
        cause = _signal_behind(exc)
        if cause is None:
            raise
        _exit_for(cause.signum)
    finally:
        # The command is over (its files are closed and flushed). Without this, the collector
        # passes of interpreter shutdown walk every object still alive (the imported modules,
        # a resumed history): 0.15-0.4 s of exit time here, for nothing to collect.
        gc.freeze()
