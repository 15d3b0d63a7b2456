"""Executor round trips: our executor over loopback websocket vs a local command, and our
executor vs Codex 0.169's for the same commands, through our client.

1. ``remote_vs_local``: ``true`` confined by the session sandbox (workspace-write, the backend
   ``detect_sandbox`` finds), N times: locally (``sandbox.launch.confine`` + ``sandbox.exec.
   run_command``, what the shell tool does) and through ``mini-codex exec-server --listen
   ws://127.0.0.1:PORT`` (``process/start`` with the same policy; the executor confines it the
   same way). Goal: remote ≤ 2× local + 3 ms per command.
2. ``ours_vs_codex_executor``: 100 × ``true`` (no sandbox: Codex's sandbox object is not ours)
   through our client against ``mini-codex exec-server`` and against ``codex exec-server``
   (``node_modules/.bin/codex``; without it this figure is null and the reason is printed).
   Goal ≤ 1.2×.

Both sides are checked to have done the same work (N exits with code 0) before any figure is
printed. Run: ``uv run python benchmarks/exec_server.py [--commands 100]``. The executors are
subprocesses started once and warmed up; the installed CLI's bytecode is compiled first
(``compileall``) so a start-up does not recompile. The last line is the JSON of the figures.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from mini_codex.environments.client import ExecServerClient  # noqa: E402
from mini_codex.environments.transport import open_websocket  # noqa: E402
from mini_codex.protocol.policy import SandboxPolicy  # noqa: E402
from mini_codex.sandbox.exec import run_command  # noqa: E402
from mini_codex.sandbox.launch import SandboxRequest, confine, detect_sandbox  # noqa: E402

CODEX = ROOT / "node_modules" / ".bin" / "codex"
MINI = Path(sys.executable).parent / "mini-codex"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"executor did not listen on {port}")


def start(argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


async def remote_runs(
    url: str, work: Path, n: int, sandbox: dict[str, object] | None
) -> list[float]:
    client = ExecServerClient(await open_websocket(url, timeout_s=30))
    times: list[float] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.run)
        await client.initialize(timeout_s=30)
        for index in range(n + 5):  # 5 warm-up commands
            started = time.perf_counter()
            result = await client.run_process(["true"], str(work), sandbox=sandbox, timeout_s=30)
            elapsed = time.perf_counter() - started
            if result.exit_code != 0:
                raise SystemExit(f"remote `true` exited {result.exit_code}: {result.output!r}")
            if index >= 5:
                times.append(elapsed)
        await client.aclose()
    return times


async def local_runs(work: Path, n: int, policy: SandboxPolicy) -> list[float]:
    backend = await detect_sandbox()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    request = SandboxRequest(
        policy=policy, cwd=work, backend=backend, env=env, allow_unsandboxed=True
    )
    times: list[float] = []
    for index in range(n + 5):
        started = time.perf_counter()
        prepared = confine(["true"], request, work)
        result = await run_command(prepared.argv, cwd=work, env=env, timeout_s=30)
        elapsed = time.perf_counter() - started
        if result.exit_code != 0:
            raise SystemExit(f"local `true` exited {result.exit_code}: {result.text()}")
        if index >= 5:
            times.append(elapsed)
    return times


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=100)
    n = parser.parse_args().commands
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="exec-server-bench-", dir=ROOT) as name:
        work = Path(name)
        policy = SandboxPolicy.workspace_write()
        backend = await detect_sandbox()
        port = free_port()
        ours = start(
            [str(MINI), "exec-server", "--listen", f"ws://127.0.0.1:{port}"], dict(os.environ)
        )
        try:
            wait_port(port)
            url = f"ws://127.0.0.1:{port}"
            local = await local_runs(work, n, policy)
            remote = await remote_runs(url, work, n, policy.model_dump(mode="json"))
            ours_plain = await remote_runs(url, work, n, None)
        finally:
            os.killpg(ours.pid, signal.SIGKILL)
            ours.wait()
        codex_plain: list[float] | None = None
        if CODEX.exists():
            (work / "codex-home").mkdir()
            port = free_port()
            codex = start(
                [str(CODEX), "exec-server", "--listen", f"ws://127.0.0.1:{port}"],
                {**os.environ, "CODEX_HOME": str(work / "codex-home")},
            )
            try:
                wait_port(port)
                codex_plain = await remote_runs(f"ws://127.0.0.1:{port}", work, n, None)
            finally:
                os.killpg(codex.pid, signal.SIGKILL)
                codex.wait()
        else:
            print(f"codex not installed at {CODEX}: ours_vs_codex_executor_ratio is null")
    assert len(local) == len(remote) == len(ours_plain) == n
    local_ms = statistics.median(local) * 1000
    remote_ms = statistics.median(remote) * 1000
    print(f"sandbox backend: {backend.kind}; {n} commands each (medians)")
    print(
        f"local session-sandbox `true`: {local_ms:.2f} ms; through our executor: {remote_ms:.2f} ms"
    )
    figures: dict[str, float | None] = {
        "remote_vs_local_ms": round(remote_ms - local_ms, 3),
        "remote_vs_local_ratio": round(remote_ms / local_ms, 3),
        "ours_vs_codex_executor_ratio": None,
    }
    if codex_plain is not None:
        assert len(codex_plain) == n
        total_ours, total_codex = sum(ours_plain), sum(codex_plain)
        print(
            f"{n} x `true`, our executor {total_ours * 1000:.0f} ms, "
            f"Codex's {total_codex * 1000:.0f} ms"
        )
        figures["ours_vs_codex_executor_ratio"] = round(total_ours / total_codex, 3)
    print(json.dumps(figures))


if __name__ == "__main__":
    anyio.run(main)
