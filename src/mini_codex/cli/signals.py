"""The CLI's signal plumbing: the process-level answer to Ctrl-C and SIGTERM.

Outside a running turn (:func:`install`, used by ``entry.py`` before anything heavy is imported:
this module imports only the standard library and, lazily, anyio) a signal during start-up
(imports, config, opening the session) or shutdown ends the process with one line on stderr and
exit code 128 + signal (130 for SIGINT, 143 for SIGTERM), never a traceback. While a session is
open, :func:`interrupt_on_signal` (``run.py``) takes both signals over and interrupts the turn
through the session, so the abort is recorded; when it lets go, it reinstalls the handlers the
process had.

It sits at the bottom of ``cli/``: ``entry.py`` and the commands import it, it imports none of them.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

__all__ = [
    "SignalExit",
    "exit_for",
    "install",
    "interrupt_on_signal",
    "mark_owner",
    "pause_collection",
    "received",
    "settle_heap",
]

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


def exit_for(signum: int) -> NoReturn:
    _say(signum)
    sys.exit(128 + signum)


def received() -> list[int]:
    """The signals the handlers received so far."""
    return _received


def mark_owner() -> None:
    """This process is the ``mini-codex`` command (``entry.main``)."""
    global _owner
    _owner = True


_owner = False
"""Whether this process is the ``mini-codex`` command (``main``), not a host or a test that runs
the CLI in-process: only then may the CLI tune process-wide state such as the collector."""


def pause_collection() -> None:
    """Turn the cyclic collector off while the ``mini-codex`` command starts (owner only).

    Start-up builds ~100k long-lived objects (modules, classes, dataclass and pydantic
    machinery) and frees almost nothing: the ~150 young collections it triggered found nothing
    to collect and cost 5-10 % of the time to the first request (issue 30). :func:`settle_heap`
    turns the collector back on; every command reaches it (``cli/main.py`` settles before any
    command other than ``exec``/``resume``, which settle once their session is open; the UI
    settles once textual is imported, ``cli/interactive.run_interactive``)."""
    if _owner:
        gc.disable()


def settle_heap() -> None:
    """Move every object alive now out of the cyclic collector's reach (``gc.freeze``) and turn
    the collector back on (:func:`pause_collection`), when this process is the ``mini-codex``
    command. Called once the heavy imports are done: their ~100k long-lived objects are then not
    walked again by each full collection (a resumed session's first turn paid ~0.07 s per
    collection for them). Only the first call does so (later objects stay collectable)."""
    global _settled
    if _owner and not _settled:
        _settled = True
        gc.freeze()
        gc.enable()


_settled = False


async def interrupt_on_signal(
    opened: list[Any],
    received: list[int],
    opening: Any,
    *,
    task_status: Any = None,
) -> None:
    """The first Ctrl-C (or SIGTERM) interrupts the turn through the session (``opened[0]``), so
    running tools get their aborted outputs recorded (before the session is open, it cancels the
    ``opening`` scope). It keeps listening until the caller cancels it, after the session has
    closed: a second signal while the turn winds down or the session closes lets the abort be
    recorded and the session close (cancelling there would cut the rollout writer off), and the
    caller then ends with the one line of the last signal. Only after it lets go does a signal
    get the handling the process had before (one line, exit 130/143)."""
    import threading

    import anyio

    status = task_status if task_status is not None else anyio.TASK_STATUS_IGNORED
    if threading.current_thread() is not threading.main_thread():
        status.started()  # an in-process run off the main thread: signals are not ours
        return
    previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            status.started()
            async for signum in signals:
                received.append(int(signum))
                if opened:
                    # The first interrupts the turn; a later one waits for the wind-down (the
                    # abort record and the session's close are shielded and bounded).
                    opened[0].interrupt()
                else:
                    opening.cancel()
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
