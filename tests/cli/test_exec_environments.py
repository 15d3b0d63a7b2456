"""``mini-codex exec`` with ``$MINI_CODEX_HOME/environments.toml``: a routed command runs on the
executor (``mini-codex exec-server``), one without ``environment_id`` runs here."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

MINI = str(Path(sys.executable).parent / "mini-codex")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_exec_routes_a_shell_command_to_the_configured_executor(tmp_path: Path) -> None:
    port = _port()
    executor = subprocess.Popen(
        [MINI, "exec-server", "--listen", f"ws://127.0.0.1:{port}"],
        env={**os.environ, "PROBE_VAR": "executor-side"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the executor did not listen"
                time.sleep(0.05)
        home, work = tmp_path / "home", tmp_path / "work"
        home.mkdir()
        work.mkdir()
        (home / "environments.toml").write_text(
            f'[[environments]]\nid = "worker"\nurl = "ws://127.0.0.1:{port}"\n'
        )
        script = tmp_path / "script.jsonl"
        calls = [
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "c1",
                "arguments": {"command": "echo $PROBE_VAR", "environment_id": "worker"},
            },
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "c2",
                "arguments": {"command": "echo ${PROBE_VAR:-unset}"},
            },
        ]
        lines = [{"output": calls}, {"output": [{"type": "message", "content": "done"}]}]
        script.write_text("".join(json.dumps(line) + "\n" for line in lines))
        env = {**os.environ, "MINI_CODEX_HOME": str(home), "PROBE_VAR": "client-side"}
        env.pop("OPENAI_API_KEY", None)
        done = subprocess.run(
            [
                MINI,
                "exec",
                "--json",
                "--cd",
                str(work),
                "-s",
                "danger-full-access",
                "--model",
                f"scripted:{script}",
                "go",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.killpg(executor.pid, signal.SIGKILL)
        executor.wait()
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    outputs = {  # by command: the two calls run in parallel and may complete in either order
        event["item"].get("command"): event["item"].get("aggregated_output")
        for event in events
        if event.get("type") == "item.completed"
        and event["item"].get("type") == "command_execution"
    }
    assert sorted(outputs.values()) == ["client-side\n", "executor-side\n"]
    [remote] = [command for command, output in outputs.items() if output == "executor-side\n"]
    assert "${PROBE_VAR:-unset}" not in str(remote)
