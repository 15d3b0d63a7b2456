"""``mini-codex exec --oss`` end to end with the real bundled model, offline.

The embedded llama.cpp server runs SmolLM2-135M (a toy) at temperature 0 with a fixed seed and
one thread, so the run is reproducible: the prompt names the tool, the model calls it through the
JSON envelope, the call runs, and the model answers. The subprocess has a timeout (the bound on
steps), and after it exits no server process of it may be left, also after a Ctrl-C mid-turn.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mini_codex.models.local import DEMO_NOTICE

MINI_CODEX = Path(sys.executable).parent / "mini-codex"
CHILD_MODULE = "mini_codex.models.local.llamacpp_child"
TIMEOUT_S = 300


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(home)
    return env


def servers_of(parent_pid: int) -> list[int]:
    """PIDs of embedded llama.cpp servers started by ``parent_pid`` that still run."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        marker = [b"--parent-pid", str(parent_pid).encode()]
        if CHILD_MODULE.encode() in argv and state != "Z":
            at = argv.index(b"--parent-pid") if b"--parent-pid" in argv else -1
            if at >= 0 and argv[at : at + 2] == marker:
                found.append(int(entry.name))
    return found


MAX_STEPS = 4
"""A toy model can repeat a failing call forever (its output depends on the prompt, which holds
the date and the temporary path): after this many steps the test interrupts the turn, so the run
is bounded by steps, not by the clock."""


def read_events(process: subprocess.Popen[str]) -> list[dict[str, Any]]:
    """The events of the run, interrupting it (Ctrl-C) once it starts step ``MAX_STEPS + 1``."""
    assert process.stdout is not None
    events: list[dict[str, Any]] = []
    for line in process.stdout:
        events.append(json.loads(line))
        steps = sum(event["type"] == "step_started" for event in events)
        if steps > MAX_STEPS and events[-1]["type"] == "step_started":
            process.send_signal(signal.SIGINT)
    return events


def test_exec_oss_runs_a_turn_with_a_real_tool_call(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    args = [str(MINI_CODEX), "exec", "--oss", "--sandbox", "workspace-write"]
    args += ["--json-events=mini-codex"]
    args += ["-c", "llamacpp.n_ctx=4096", "Use the shell tool to run: ls"]
    process = subprocess.Popen(
        args,
        cwd=work,
        env=clean_env(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    timer = threading.Timer(TIMEOUT_S, process.kill)
    timer.start()
    try:
        events = read_events(process)
        _, stderr = process.communicate(timeout=60)
    finally:
        timer.cancel()
        process.kill()
        process.communicate()  # reaps it and closes its pipes (left open, they leak into
        # the next test as unraisable ResourceWarnings)
    kinds = [event["type"] for event in events]
    looped = kinds.count("step_started") > MAX_STEPS
    # The turn either ends with the model's answer, or (a toy repeating itself) is interrupted
    # and records the abort, exiting 130 as any interrupted exec does.
    assert (process.returncode, stderr) == (130 if looped else 0, DEMO_NOTICE + "\n")
    assert servers_of(process.pid) == []
    assert kinds[0] == "session_configured"
    assert events[0]["model"] == "SmolLM2-135M-Instruct"
    assert kinds[-1] == ("turn_aborted" if looped else "task_complete")
    assert "error" not in kinds
    items = [event["item"] for event in events if event["type"] == "item_completed"]
    calls = [item for item in items if item["type"] == "function_call"]
    outputs = [item for item in items if item["type"] == "function_call_output"]
    assert calls
    assert [item["call_id"] for item in outputs] == [call["call_id"] for call in calls]
    assert all(call["name"] in ("shell", "apply_patch", "update_plan") for call in calls)
    assert isinstance(json.loads(calls[0]["arguments"]), dict)
    ends = [event for event in events if event["type"] == "tool_call_end"]
    assert [end["call_id"] for end in ends] == [call["call_id"] for call in calls]
    if not looped:
        assert items[-1]["type"] == "message"
        assert items[-1]["role"] == "assistant"
    counts = [event["info"] for event in events if event["type"] == "token_count"]
    assert counts
    assert {info["model_context_window"] for info in counts} == {4096}  # the server's n_ctx
    assert all(info["last_token_usage"]["input_tokens"] > 0 for info in counts)
    verify = subprocess.run(
        [str(MINI_CODEX), "rollout", "verify", events[0]["rollout_path"]],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_ctrl_c_mid_turn_leaves_no_server_behind(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    args = [str(MINI_CODEX), "exec", "--oss", "--json-events=mini-codex"]
    args += ["-c", "llamacpp.n_ctx=2048"]
    process = subprocess.Popen(
        [*args, "Write a long story about the sea."],
        cwd=work,
        env=clean_env(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if json.loads(line)["type"] == "step_started":
                break
        started = servers_of(process.pid)
        assert len(started) == 1
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
    assert process.returncode == 128 + signal.SIGINT
    deadline = time.monotonic() + 10
    while servers_of(process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert servers_of(process.pid) == []
