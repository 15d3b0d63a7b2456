"""Helpers for the hostile-input tests of workspace discovery (one test module per input class).

Every discovery call runs in a worker thread with a watchdog: if it blocks (the old code opened a
FIFO and waited for a writer forever), the watchdog frees it by opening the FIFOs for writing and
the test fails instead of hanging.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from mini_codex.discovery import WorkspaceScanner, load_agents_md
from mini_codex.discovery.agents_md import LoadedAgentsMd

T = TypeVar("T")

LIMIT_S = 10.0


def repo(root: Path, files: Sequence[str] = ("src/main.py", "README.md")) -> Path:
    """A small project: a ``.git`` directory (the project root marker) and a few files."""
    (root / ".git" / "info").mkdir(parents=True)
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}\n")
    return root


def without_blocking(call: Callable[[], T], fifos: Sequence[Path] = ()) -> T:
    """``call()``, failing the test if it does not return within :data:`LIMIT_S`."""
    result: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(LIMIT_S)
    if worker.is_alive():
        for fifo in fifos:  # free a reader stuck in open()
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        raise AssertionError(f"discovery blocked for more than {LIMIT_S} s")
    if errors:
        raise errors[0]
    return result[0]


def load(cwd: Path, fifos: Sequence[Path] = ()) -> LoadedAgentsMd:
    return without_blocking(lambda: load_agents_md(cwd), fifos)


def scan(root: Path, fifos: Sequence[Path] = ()) -> tuple[list[str], tuple[str, ...]]:
    """The sorted listing and the warnings of a fresh scan."""
    scanner = WorkspaceScanner(root)
    files = without_blocking(scanner.scan, fifos)
    return sorted(files.paths), scanner.warnings
