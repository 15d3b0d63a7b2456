from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from exec_server_harness import CODEX, free_port, mini_codex_argv, start_executor, stop, wait_port


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def codex() -> Path:
    if not CODEX.exists():
        pytest.skip("the real Codex CLI is not installed (npm ci)")
    return CODEX


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
