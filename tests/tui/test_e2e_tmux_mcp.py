"""The real ``mini-codex`` in a terminal (tmux, inline mode) with the real ``server-everything``
over stdio and a scripted model: the server's elicitation answered in the form overlay, then its
``args-prompt`` run as ``/mcp__everything__args-prompt city=Paris`` from the completion menu;
Ctrl+D leaves and the rollout verifies."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_e2e_tmux import MINI_CODEX, Tmux
from test_e2e_tmux import tmux as tmux  # the fixture

from mini_codex.protocol import FunctionCallOutput, ResponseItemLine
from mini_codex.rollout.reader import read_rollout

REPO = Path(__file__).resolve().parents[2]
EVERYTHING_BIN = REPO / "node_modules" / ".bin" / "mcp-server-everything"


def position(screen: str) -> int:
    """Where the form's focus is: field N (its key line), 14 on the choices, 0 unknown."""
    if "enter confirms" in screen:
        return 14
    found = re.search(r"field (\d+) of 13", screen)
    return int(found.group(1)) if found else 0


def enter_until(tmux: Tmux, target: int) -> None:
    """Press Enter until the focus reaches ``target`` (field number; 14: the choices).

    Each press waits (up to 6 s) for the form to show that the focus moved before pressing
    again: on a loaded machine the inline UI redraws seconds late, and a key sent into a
    redraw is occasionally lost (a person presses again; so does the test)."""
    for _ in range(3 * target):
        now = position(tmux.screen())
        if now >= target:
            assert now == target, f"went past field {target}:\n{tmux.screen()}"
            return
        tmux.run("send-keys", "-t", "ui", "Enter")
        deadline = time.monotonic() + 6.0
        while time.monotonic() < deadline and position(tmux.screen()) == now:
            time.sleep(0.1)
    raise AssertionError(f"the focus never reached {target}:\n{tmux.screen()}")


def test_elicitation_overlay_and_a_prompt_command_in_a_real_terminal(
    tmux: Tmux, tmp_path: Path
) -> None:
    if shutil.which("node") is None or not EVERYTHING_BIN.exists():
        pytest.skip("node or node_modules is missing (run `npm ci` at the repository root)")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(
        "[mcp_servers.everything]\n"
        'command = "node"\n'
        f'args = ["{EVERYTHING_BIN}", "stdio"]\n'
        "required = true\n"
    )
    call = {
        "type": "function_call",
        "name": "trigger_elicitation_request",
        "namespace": "mcp__everything",
        "arguments": "{}",
        "call_id": "e1",
    }
    steps = [
        {"output": [call]},
        {"output": [{"type": "message", "content": "thanks for the form"}]},
        {"output": [{"type": "message", "content": "weather noted"}]},
    ]
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(step) + "\n" for step in steps))
    env = {"MINI_CODEX_HOME": str(home), "TERM": "xterm-256color", "PATH": os.environ["PATH"]}
    exports = " ".join(f"{key}={value}" for key, value in env.items())
    command = (
        # (started once the window has its size: a resize while it starts leaves stale rows)
        f"sleep 1; cd {work} && env {exports} {MINI_CODEX} -m scripted:{script} -a never "
        f"'ask me'; echo EXITED $?; sleep 30"
    )
    tmux.run("new-session", "-d", "-s", "ui", "-x", "100", "-y", "40", command)
    screen = tmux.wait_for(lambda s: "MCP server everything asks:" in s, limit_s=60)
    assert "Your full, legal name" in screen
    tmux.run("send-keys", "-t", "ui", "-l", "Grace Hopper")
    tmux.wait_for(lambda s: "Grace Hopper" in s)
    enter_until(tmux, 2)  # the next field: check (yes/no)
    tmux.run("send-keys", "-t", "ui", "-l", "yes")
    tmux.wait_for(lambda s: "│ yes " in s)
    enter_until(tmux, 14)  # through the remaining fields (left empty) to the choices
    assert "Accept: send these answers" in tmux.screen()
    tmux.run("send-keys", "-t", "ui", "Enter")  # Accept is highlighted
    tmux.wait_for(lambda s: "thanks for the form" in s)
    assert "elicitation accept" in tmux.screen()

    tmux.run("send-keys", "-t", "ui", "-l", "/mcp__everything__ar")
    screen = tmux.wait_for(lambda s: "/mcp__everything__args-prompt" in s and "city=…" in s)
    tmux.run("send-keys", "-t", "ui", "Enter")  # completes the command (it takes arguments)
    tmux.run("send-keys", "-t", "ui", "-l", "city=Paris")
    tmux.wait_for(lambda s: "/mcp__everything__args-prompt city=Paris" in s)
    tmux.run("send-keys", "-t", "ui", "Enter")
    screen = tmux.wait_for(lambda s: "weather noted" in s)
    assert "What's weather in Paris?" in screen
    tmux.run("send-keys", "-t", "ui", "C-d")
    assert "EXITED 0" in tmux.wait_for(lambda s: "EXITED" in s)

    (rollout,) = sorted(home.glob("sessions/*/*/*/rollout-*.jsonl"))
    outputs = [
        line.payload.output
        for line in read_rollout(rollout).lines
        if isinstance(line, ResponseItemLine) and isinstance(line.payload, FunctionCallOutput)
    ]
    raw = json.loads(json.loads(str(outputs[0]))[-1]["text"].split("Raw result: ", 1)[1])
    assert raw == {"action": "accept", "content": {"name": "Grace Hopper", "check": True}}
    verified = subprocess.run(
        [str(MINI_CODEX), "rollout", "verify", str(rollout)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
