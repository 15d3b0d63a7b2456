"""Time from spawning a CLI to the first byte of its first model request.

A socket listens on 127.0.0.1; ``launch(url)`` returns the argv and environment of a CLI whose
provider points at ``url`` (``http://127.0.0.1:PORT/v1``). The time is taken from just before
the spawn to the moment the first byte of the first request arrives; the process and its
children (it runs in a session of its own: the ``codex`` launcher is a node script that starts
the binary) are then killed; the request is never answered. Median of ``runs``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

Launch = Callable[[str], tuple[list[str], dict[str, str]]]


def first_byte_once(
    launch: Launch, cwd: Path, *, timeout_s: float = 120.0, stderr: IO[Any] | int | None = None
) -> float:
    """Seconds from spawn to the first request byte, for one run (``stderr``: where the child's
    stderr goes, default nowhere)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        argv, env = launch(f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
        started = time.perf_counter()
        child = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if stderr is None else stderr,
            start_new_session=True,
        )
        try:
            conn = _accept(sock, child, timeout_s, argv[0])
            with conn:
                conn.settimeout(timeout_s)
                if not conn.recv(1):
                    raise RuntimeError(f"{argv[0]} connected and sent nothing")
                elapsed = time.perf_counter() - started
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)  # its own group: a launcher's children too
            child.wait()
    return elapsed


def _accept(
    sock: socket.socket, child: subprocess.Popen[bytes], timeout_s: float, name: str
) -> socket.socket:
    """The child's connection; raises when the child exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    sock.settimeout(0.05)
    while True:
        try:
            return sock.accept()[0]
        except TimeoutError:
            if child.poll() is not None:
                raise RuntimeError(
                    f"{name} exited {child.returncode} before its first request"
                ) from None
            if time.monotonic() > deadline:
                raise


def first_byte_s(launch: Launch, cwd: Path, runs: int) -> list[float]:
    """The ``runs`` first-byte times (seconds), in order."""
    return [first_byte_once(launch, cwd) for _ in range(runs)]


def import_budget(
    launch: Launch, cwd: Path, *, top: int = 12
) -> tuple[float, list[tuple[str, float]]]:
    """What a Python CLI imports before its first request byte: ``launch``'s argv is run with
    ``-X importtime`` inserted after the interpreter (``argv[0]`` must be a Python interpreter);
    the stderr lines written by the first byte are summed by self time per package (top-level
    name; ``mini_codex.X`` for our own). Returns (total ms, the ``top`` packages as (name, ms))."""

    def timed(url: str) -> tuple[list[str], dict[str, str]]:
        argv, env = launch(url)
        return [argv[0], "-X", "importtime", *argv[1:]], env

    with tempfile.TemporaryFile() as stderr:
        first_byte_once(timed, cwd, stderr=stderr)
        stderr.seek(0)
        listing = stderr.read().decode(errors="replace")
    per_package: dict[str, float] = {}
    for line in listing.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        self_us, _, name = (part.strip() for part in line[len("import time:") :].split("|"))
        if not self_us.isdigit():
            continue
        parts = name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "mini_codex" else parts[0]
        per_package[key] = per_package.get(key, 0.0) + int(self_us) / 1000
    ranked = sorted(per_package.items(), key=lambda item: -item[1])
    return sum(per_package.values()), ranked[:top]


FLOOR_CODE = (
    "import asyncio, tomllib, anyio, httpx2, msgspec, orjson, typer\n"
    "from pydantic import BaseModel\n"
    "class Probe(BaseModel):\n"
    "    value: int\n"
)
"""The third-party part of ``exec``'s start-up, with nothing of ours: the interpreter, the event
loop, the HTTP client, the CLI framework, the JSON codecs, and pydantic up to its first model
class (whose first build imports the schema machinery)."""


def dependency_floor_s(python: str, runs: int) -> list[float]:
    """Seconds ``python -c FLOOR_CODE`` takes to run, per run (spawn to exit)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([python, "-c", FLOOR_CODE], check=True)
        times.append(time.perf_counter() - started)
    return times
