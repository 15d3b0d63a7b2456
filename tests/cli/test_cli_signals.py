"""Ctrl-C and SIGTERM at any moment: exit 130/143 with one line, never a traceback (issue 19).

Reproduction: Ctrl-C in the first second (while the CLI imports and opens the session) printed a
``KeyboardInterrupt`` traceback. Real subprocesses of the installed ``mini-codex`` script get the
signal at several moments from start-up into the turn; once the session runs a turn, the abort
is recorded in its rollout as before (``test_exec_cli.py`` checks the recorded output).
The first moment is 0.15 s: before that the interpreter itself may still be starting (site,
the console script), before any mini-codex code can install a handler.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mini_codex.rollout import read_rollout
from mini_codex.rollout.replay.verify import check_rollout

MINI_CODEX = Path(sys.executable).parent / "mini-codex"
NAMES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


def start(tmp_path: Path) -> subprocess.Popen[str]:
    script = tmp_path / "s.jsonl"
    call = {"type": "function_call", "name": "shell", "arguments": {"command": "sleep 30"}}
    script.write_text(json.dumps({"output": [call]}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(tmp_path / "home")
    args = [
        "exec",
        "--model",
        f"scripted:{script}",
        "--json-events=mini-codex",
        "--cd",
        str(tmp_path),
        "wait",
    ]
    return subprocess.Popen(
        [str(MINI_CODEX), *args],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    ("signum", "delay"),
    [
        (signal.SIGINT, 0.15),
        (signal.SIGINT, 0.3),
        (signal.SIGINT, 0.7),
        (signal.SIGINT, 1.2),
        (signal.SIGTERM, 0.3),
        (signal.SIGTERM, 0.9),
    ],
)
def test_a_signal_during_start_up_exits_with_one_line(
    tmp_path: Path, signum: signal.Signals, delay: float
) -> None:
    process = start(tmp_path)
    try:
        time.sleep(delay)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert "Traceback" not in stderr
    assert process.returncode == 128 + signum, (stdout, stderr)
    events = [json.loads(line) for line in stdout.splitlines()]
    if events:
        # The session was open and took the signal: it interrupts the turn (if one started)
        # and records the abort, as before; the events say what happened.
        assert stderr == ""
        if any(event["type"] == "turn_started" for event in events):
            assert events[-1]["type"] == "turn_aborted"
        path = Path(events[0]["rollout_path"])
        if path.exists():
            assert check_rollout(read_rollout(path).lines).violations == []
    else:
        assert stderr == f"mini-codex: {NAMES[signum]}\n"


def test_a_second_signal_while_shutting_down_exits_with_one_line(tmp_path: Path) -> None:
    process = start(tmp_path)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if json.loads(line)["type"] == "tool_call_begin":
                break
        time.sleep(0.3)
        process.send_signal(signal.SIGINT)  # interrupts the turn
        process.send_signal(signal.SIGTERM)  # arrives while the session winds down
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert "Traceback" not in stderr
    assert process.returncode in (130, 143)
    assert stderr in ("", "mini-codex: terminated\n")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_wrapped_by_a_task_group_exits_with_one_line(
    tmp_path: Path, signum: signal.Signals
) -> None:
    # A signal that lands while the session opens (inside its task group) arrives wrapped in an
    # exception group: the same one line and exit code as anywhere else during start-up.
    probe = (
        "import mini_codex.cli.main as cli\n"
        "from mini_codex.cli.entry import SignalExit, main\n"
        "def app():\n"
        f"    inner = BaseExceptionGroup('g', [SignalExit({int(signum)})])\n"
        "    raise BaseExceptionGroup('open', [inner])\n"
        "cli.app = app\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (128 + signum, f"mini-codex: {NAMES[signum]}\n")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_that_python_wraps_in_another_error_exits_with_one_line(
    tmp_path: Path, signum: signal.Signals
) -> None:
    # A signal that lands while a class is being built during an import (in a descriptor's
    # ``__set_name__``, as for every dataclass field) comes out of Python 3.11 as a
    # ``RuntimeError`` caused by it: still the one line and the signal's exit code.
    probe = (
        "import mini_codex.cli.main as cli\n"
        "from mini_codex.cli.entry import SignalExit, main\n"
        "class Field:\n"
        "    def __set_name__(self, owner, name):\n"
        f"        raise SignalExit({int(signum)})\n"
        "def app():\n"
        "    class Options:\n"
        "        config = Field()\n"
        "cli.app = app\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (128 + signum, f"mini-codex: {NAMES[signum]}\n")
