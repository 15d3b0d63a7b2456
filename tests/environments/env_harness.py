"""Shared helpers of the environments tests: our executors (websocket, stdio), a Session with
environments, waiting for readiness, and reading the requests the scripted model saw."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from mini_codex.config import Config, load_config
from mini_codex.environments.config import EnvironmentsConfig, ExecutorSpec
from mini_codex.host import SessionOptions, open_options
from mini_codex.protocol import FunctionCallOutput, Message
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.session import Session
from mini_codex.testing import ScriptedModel, ScriptStep

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "exec_server"
MINI = str(Path(sys.executable).parent / "mini-codex")
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PROBE_VAR": "client-side"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def ws_executor(tmp_path: Path) -> AsyncIterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen(  # noqa: ASYNC220 (the executor under test, started once)
        [MINI, "exec-server", "--listen", f"ws://127.0.0.1:{port}"],
        env={**os.environ, "PROBE_VAR": "ws-executor"},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield f"ws://127.0.0.1:{port}", process
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def stdio_spec(env_id: str, *, gate: Path | None = None) -> ExecutorSpec:
    command = f"exec {MINI} exec-server --listen stdio"
    if gate is not None:
        command = f"while [ ! -e {gate} ]; do sleep 0.05; done; {command}"
    return ExecutorSpec(
        id=env_id,
        program="sh",
        args=("-c", command),
        env={"PROBE_VAR": "stdio-executor"},
        initialize_timeout_s=60,
    )


@asynccontextmanager
async def session(
    tmp_path: Path,
    script: Sequence[ScriptStep],
    environments: EnvironmentsConfig | None,
    *,
    config_overrides: Config | None = None,
    on_event: Callable[[SessionEvent], None] | None = None,
) -> AsyncIterator[tuple[Session, ScriptedModel]]:
    cwd, home = tmp_path / "work", tmp_path / "home"
    cwd.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    model = ScriptedModel(script)
    options = SessionOptions(
        cwd=cwd,
        home=home,
        client=model,
        config=config_overrides or load_config(None, ["tools.unified_exec=true"]),
        sandbox=SandboxPolicy.danger_full_access(),
        env=ENV,
        environ=dict(os.environ),
        environments=environments,
        on_event=on_event,
    )
    async with open_options(options) as opened:
        yield opened, model


async def wait_states(opened: Session, want: dict[str, str], timeout_s: float = 60) -> None:
    manager = opened.caches.environments
    assert manager is not None
    with anyio.fail_after(timeout_s):
        while {e.id: e.state for e in manager.snapshot().entries} != want:  # noqa: ASYNC110
            await anyio.sleep(0.05)


def environment_context(prompt_input: Sequence[Any]) -> list[str]:
    texts = []
    for item in prompt_input:
        if isinstance(item, Message):
            for part in item.content:
                text = getattr(part, "text", "")
                if text.startswith("<environment_context>"):
                    texts.append(text)
    return texts


def outputs(prompt_input: Sequence[Any]) -> dict[str, str]:
    return {
        item.call_id: item.output.rsplit("Output:\n", 1)[-1]
        if isinstance(item.output, str)
        else str(item.output)
        for item in prompt_input
        if isinstance(item, FunctionCallOutput)
    }


CODEX = ROOT / "node_modules" / ".bin" / "codex"


@asynccontextmanager
async def codex_executor(tmp_path: Path) -> AsyncIterator[str]:
    """The real ``codex exec-server --listen ws://127.0.0.1:PORT`` (``PROBE_VAR=codex-executor``);
    the caller skips when it is not installed."""
    port = free_port()
    home = tmp_path / "codex-executor-home"
    home.mkdir(exist_ok=True)
    process = subprocess.Popen(  # noqa: ASYNC220 (the executor under test, started once)
        [str(CODEX), "exec-server", "--listen", f"ws://127.0.0.1:{port}"],
        env={**os.environ, "PROBE_VAR": "codex-executor", "CODEX_HOME": str(home)},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield f"ws://127.0.0.1:{port}"
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def status_and_output(text: str) -> tuple[str, str]:
    """A unified exec answer's status line and output (Codex 0.169's text)."""
    lines = text.split("\n")
    return lines[2], text.split("Output:\n", 1)[1]


def output_texts(prompt_input: Sequence[Any]) -> dict[str, str]:
    return {
        item.call_id: item.output if isinstance(item.output, str) else str(item.output)
        for item in prompt_input
        if isinstance(item, FunctionCallOutput)
    }
