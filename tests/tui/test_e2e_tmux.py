"""The real ``mini-codex`` in a terminal (tmux, inline mode) with a scripted model: a prompt, an
approval overlay denied (no file), then approved (the file), ``/quit``, and a clean rollout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tui_helpers import png

MINI_CODEX = Path(sys.executable).parent / "mini-codex"


def shell_step(call_id: str) -> str:
    call = {"type": "function_call", "name": "shell", "call_id": call_id}
    call["arguments"] = {"command": "touch hello.py"}
    return json.dumps({"output": [call]})


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True
        )
        return done.stdout

    def screen(self, target: str = "ui") -> str:
        return self.run("capture-pane", "-p", "-t", target)

    def wait_for(
        self, check: Callable[[str], bool], limit_s: float = 20.0, target: str = "ui"
    ) -> str:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            text = self.screen(target)
            if check(text):
                return text
            time.sleep(0.1)
        raise AssertionError(f"the terminal never showed what was expected:\n{self.screen()}")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    session = Tmux(f"mini-codex-test-{os.getpid()}-{tmp_path.name}")
    yield session
    subprocess.run(["tmux", "-L", session.socket, "kill-server"], check=False, capture_output=True)


def test_deny_then_approve_then_quit_in_a_real_terminal(tmux: Tmux, tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    script = tmp_path / "script.jsonl"
    final = {"output": [{"type": "message", "content": "hello.py is there"}]}
    script.write_text("\n".join([shell_step("c1"), shell_step("c2"), json.dumps(final)]) + "\n")
    env = {"MINI_CODEX_HOME": str(home), "TERM": "xterm-256color", "PATH": os.environ["PATH"]}
    exports = " ".join(f"{key}={value}" for key, value in env.items())
    command = (
        f"cd {work} && env {exports} {MINI_CODEX} -m scripted:{script} -a untrusted "
        f"'make hello.py'; echo EXITED $?; sleep 30"
    )
    tmux.run("new-session", "-d", "-s", "ui", "-x", "100", "-y", "30", command)
    tmux.wait_for(lambda s: "[y] approve once" in s)
    tmux.run("send-keys", "-t", "ui", "n")
    tmux.wait_for(lambda s: "denied: " in s and "[y] approve once" in s)
    assert not (work / "hello.py").exists()
    tmux.run("send-keys", "-t", "ui", "y")
    tmux.wait_for(lambda s: "hello.py is there" in s)
    assert (work / "hello.py").exists()
    tmux.run("send-keys", "-t", "ui", "/quit")
    tmux.wait_for(lambda s: "/quit" in s)
    tmux.run("send-keys", "-t", "ui", "Escape")  # close the completion menu
    tmux.run("send-keys", "-t", "ui", "Enter")
    screen = tmux.wait_for(lambda s: "EXITED" in s)
    assert "EXITED 0" in screen
    rollouts = sorted(home.glob("sessions/*/*/*/rollout-*.jsonl"))
    assert len(rollouts) == 1
    session_id = rollouts[0].stem[-36:]
    assert f"continue with: mini-codex resume {session_id}" in screen.replace("\n", "")
    verified = subprocess.run(
        [str(MINI_CODEX), "rollout", "verify", str(rollouts[0])],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("ok: ")

    # `resume --last` without a prompt continues the session in the UI; Ctrl+D leaves it.
    again = (
        f"cd {tmp_path} && env {exports} {MINI_CODEX} resume --last -m scripted:{script}; "
        "echo EXITED $?; sleep 30"
    )
    tmux.run("new-session", "-d", "-s", "again", "-x", "100", "-y", "30", again)
    tmux.wait_for(lambda s: f"resumed session {session_id[:8]}" in s, target="again")
    tmux.run("send-keys", "-t", "again", "C-d")
    assert "EXITED 0" in tmux.wait_for(lambda s: "EXITED" in s, target="again")


def test_live_output_and_an_image_chip_in_a_real_terminal(tmux: Tmux, tmp_path: Path) -> None:
    """``-i FILE`` shows its chip under the opening prompt; a running command's output appears
    while it runs (the command waits for a file the test creates), then its exit code."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (work / "shot.png").write_bytes(png(3, 2))
    command = "for i in 1 2 3; do echo step$i; done; while [ ! -e go ]; do sleep 0.05; done"
    call = {"type": "function_call", "name": "shell", "call_id": "c1"}
    call["arguments"] = {"command": command}
    final = {"output": [{"type": "message", "content": "saw the picture"}]}
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"output": [call]}) + "\n" + json.dumps(final) + "\n")
    env = {"MINI_CODEX_HOME": str(home), "TERM": "xterm-256color", "PATH": os.environ["PATH"]}
    exports = " ".join(f"{key}={value}" for key, value in env.items())
    run = (
        f"cd {work} && env {exports} {MINI_CODEX} -m scripted:{script} -a never "
        f"-i shot.png 'what is in it'; echo EXITED $?; sleep 30"
    )
    tmux.run("new-session", "-d", "-s", "ui", "-x", "100", "-y", "30", run)
    screen = tmux.wait_for(lambda s: "step3" in s and "⋯ running" in s)
    assert "[image: shot.png 3x2]" in screen
    assert "saw the picture" not in screen
    (work / "go").touch()
    screen = tmux.wait_for(lambda s: "saw the picture" in s)
    assert "✓ exit 0" in screen
    assert "⋯ running" not in screen
    tmux.run("send-keys", "-t", "ui", "C-d")
    assert "EXITED 0" in tmux.wait_for(lambda s: "EXITED" in s)
    (rollout,) = home.glob("sessions/*/*/*/rollout-*.jsonl")
    text = rollout.read_text()
    assert '"type":"input_image"' in text.replace(" ", "")
    assert "exec_command_output_delta" not in text
