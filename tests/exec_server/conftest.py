from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / "node_modules" / ".bin" / "codex"
FIXTURES = ROOT / "tests" / "fixtures" / "exec_server"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def mini_codex_argv() -> list[str]:
    script = Path(sys.executable).parent / "mini-codex"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mini_codex.cli.main"]


@pytest.fixture
def codex() -> Path:
    if not CODEX.exists():
        pytest.skip("the real Codex CLI is not installed (npm ci)")
    return CODEX


def start_executor(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, 9)
    except ProcessLookupError:
        pass
    process.wait()


@pytest.fixture
def mini_ws(tmp_path: Path) -> Iterator[str]:
    """``mini-codex exec-server --listen ws://127.0.0.1:PORT`` as a subprocess (PROBE_VAR set)."""
    port = free_port()
    env = {**os.environ, "PROBE_VAR": "executor-side"}
    process = start_executor(
        [*mini_codex_argv(), "exec-server", "--listen", f"ws://127.0.0.1:{port}"], env, tmp_path
    )
    try:
        wait_port(port)
        yield f"ws://127.0.0.1:{port}"
    finally:
        stop(process)


@pytest.fixture
def codex_ws(codex: Path, tmp_path: Path) -> Iterator[str]:
    """The real ``codex exec-server --listen ws://127.0.0.1:PORT`` (PROBE_VAR set)."""
    port = free_port()
    home = tmp_path / "codex-executor-home"
    home.mkdir()
    env = {**os.environ, "PROBE_VAR": "executor-side", "CODEX_HOME": str(home)}
    process = start_executor(
        [str(codex), "exec-server", "--listen", f"ws://127.0.0.1:{port}"], env, tmp_path
    )
    try:
        wait_port(port)
        yield f"ws://127.0.0.1:{port}"
    finally:
        stop(process)
