"""``mini-codex exec`` and ``mini-codex resume`` end to end, offline.

The model is a script file (``--model scripted:FILE``); ``MINI_CODEX_HOME`` is a temporary dir and
API keys are removed from the environment, so nothing can reach the network. The main flow (exec,
then ``resume --last``) and one refused invocation run as real subprocesses (one ``exec`` shared
by the module); the other refusals drive the typer app in-process, which is much faster.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.protocol import FunctionCallOutput, ResponseItemLine, WorldStateLine
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import check_rollout

MINI_CODEX = Path(sys.executable).parent / "mini-codex"
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello from the script\n*** End Patch\n"
EXEC_SCRIPT = [
    {
        "output": [
            {"type": "function_call", "name": "apply_patch", "arguments": {"input": PATCH}},
        ]
    },
    {
        "output": [
            {"type": "function_call", "name": "shell", "arguments": {"command": "cat hello.txt"}}
        ]
    },
    {"output": [{"type": "message", "content": "hello.txt says hello."}], "end_turn": True},
]
WORKSPACE_UPDATE = "<workspace_files>\nAdded files:\nhello.txt\n</workspace_files>"
RESUME_SCRIPT = [{"output": [{"type": "message", "content": "Still here."}]}]


def write_script(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def clean_env(home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "MINI_CODEX_"))
    }
    env["MINI_CODEX_HOME"] = str(home)
    return env


def mini_codex(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MINI_CODEX), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


@dataclass(frozen=True)
class ExecRun:
    """One ``mini-codex exec`` and copies of what it left behind (later tests append to files)."""

    root: Path
    env: dict[str, str]
    events: list[dict[str, Any]]
    trace: Path
    requests: list[dict[str, Any]]
    rollout: bytes


@pytest.fixture(scope="module")
def exec_run(tmp_path_factory: pytest.TempPathFactory) -> ExecRun:
    root = tmp_path_factory.mktemp("exec")
    work = root / "work"
    work.mkdir()
    env = clean_env(root / "home")
    script = write_script(root / "exec.jsonl", EXEC_SCRIPT)
    trace = root / "trace.jsonl"
    args = [
        "exec",
        "--model",
        f"scripted:{script}",
        "--json-events=mini-codex",
        "--trace-requests",
        str(trace),
    ]
    result = mini_codex([*args, "--cd", str(work), "greet me"], env, cwd=root)
    assert (result.returncode, result.stderr) == (0, "")
    events = json_lines(result.stdout)
    rollout = Path(events[0]["rollout_path"]).read_bytes()
    return ExecRun(root, env, events, trace, json_lines(trace.read_text()), rollout)


def test_json_events_carry_the_live_output_of_commands(exec_run: ExecRun) -> None:
    """``--json-events=mini-codex`` includes Codex's ``exec_command_output_delta`` (base64 chunks
    of the merged output), before the call's end; the rollout never records them."""
    events = exec_run.events
    (shell_end,) = [e for e in events if e["type"] == "tool_call_end" and e["name"] == "shell"]
    deltas = [e for e in events if e["type"] == "exec_command_output_delta"]
    assert {(d["call_id"], d["stream"]) for d in deltas} == {(shell_end["call_id"], "stdout")}
    chunks = b"".join(base64.b64decode(d["chunk"]) for d in deltas)
    assert chunks.decode() == shell_end["details"]["output"]
    assert max(events.index(d) for d in deltas) < events.index(shell_end)
    assert b"exec_command_output_delta" not in exec_run.rollout


def test_exec_runs_the_scripted_loop_offline_with_json_events_and_a_request_trace(
    exec_run: ExecRun, tmp_path: Path
) -> None:
    events = exec_run.events
    work = (exec_run.root / "work").resolve()

    assert (work / "hello.txt").read_text() == "hello from the script\n"
    assert not (exec_run.root / "hello.txt").exists()
    types = [event["type"] for event in events]
    assert types[:2] == ["session_configured", "task_started"]
    assert types[-1] == "task_complete"
    assert events[-1]["last_agent_message"] == "hello.txt says hello."
    configured = events[0]
    assert (configured["cwd"], configured["resumed"]) == (str(work), False)
    ends = [event for event in events if event["type"] == "tool_call_end"]
    assert [(end["name"], end["success"]) for end in ends] == [
        ("apply_patch", True),
        ("shell", True),
    ]
    assert "hello from the script" in ends[1]["output"]
    steps = [event for event in events if event["type"] == "step_started"]
    assert [(step["sequence"], step["world_state_changed"]) for step in steps] == [
        (1, []),
        (2, ["workspace"]),
        (3, []),
    ]

    requests = exec_run.requests
    for request in requests:
        assert {"turn_id", "step_id", "step_sequence", "instructions", "input", "tools"} <= set(
            request
        )
    assert [request["step_sequence"] for request in requests] == [1, 2, 3]
    assert [request["step_id"] for request in requests] == [step["step_id"] for step in steps]
    assert len({request["step_id"] for request in requests}) == 3
    assert len({request["turn_id"] for request in requests}) == 1
    assert [tool["name"] for tool in requests[0]["tools"]] == [
        "shell",
        "apply_patch",
        "update_plan",
        "view_image",
    ]
    assert requests[1]["input"][-1] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": WORKSPACE_UPDATE}],
    }
    assert requests[0]["instructions"] == requests[2]["instructions"] != ""

    rollout_path = Path(configured["rollout_path"])
    assert rollout_path.is_relative_to(exec_run.root / "home" / "sessions")
    copy = tmp_path / "rollout.jsonl"
    copy.write_bytes(exec_run.rollout)
    assert check_rollout(read_rollout(copy).lines).violations == []


def test_resume_last_continues_the_same_session_and_appends_to_its_rollout(
    exec_run: ExecRun,
) -> None:
    configured = exec_run.events[0]
    rollout_path = Path(configured["rollout_path"])
    script = write_script(exec_run.root / "resume.jsonl", RESUME_SCRIPT)
    args = ["resume", "--last", "--model", f"scripted:{script}", "--json-events=mini-codex"]
    args += ["--trace-requests", str(exec_run.trace)]

    # No --cd: the session resumes in the cwd it was recorded in, not the process's cwd.
    result = mini_codex([*args, "are you there?"], exec_run.env, cwd=exec_run.root)

    assert (result.returncode, result.stderr) == (0, "")
    resumed = json_lines(result.stdout)
    assert resumed[0]["type"] == "session_configured"
    assert resumed[0]["session_id"] == configured["session_id"]
    assert resumed[0]["resumed"] is True
    assert resumed[0]["cwd"] == configured["cwd"] == str((exec_run.root / "work").resolve())
    assert resumed[0]["rollout_path"] == str(rollout_path)
    assert resumed[-1]["type"] == "task_complete"
    assert resumed[-1]["last_agent_message"] == "Still here."

    after = rollout_path.read_bytes()
    assert after.startswith(exec_run.rollout)
    lines = read_rollout(rollout_path).lines
    appended = lines[len(exec_run.rollout.splitlines()) :]
    assert [line.to_json()["type"] for line in appended] == [
        "event_msg",
        "turn_context",
        "response_item",
        "event_msg",
        "response_item",
        "event_msg",
    ]
    assert not any(isinstance(line, WorldStateLine) for line in appended)
    assert check_rollout(lines).violations == []

    traced = json_lines(exec_run.trace.read_text())
    before = exec_run.requests
    assert traced[: len(before)] == before
    (request,) = traced[len(before) :]
    previous = before[-1]["input"]
    assert request["turn_id"] != before[-1]["turn_id"]
    assert request["input"][: len(previous)] == previous
    assert request["input"][len(previous) :] == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "hello.txt says hello."}],
            "id": "msg_3_0",
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "are you there?"}],
        },
    ]


def test_a_refused_invocation_is_one_line_on_stderr_exit_2_and_writes_nothing(
    tmp_path: Path,
) -> None:
    script = write_script(tmp_path / "s.jsonl", RESUME_SCRIPT)
    trace = tmp_path / "trace.jsonl"
    args = ["exec", "--model", f"scripted:{script}", "--sandbox", "bogus"]
    result = mini_codex(
        [*args, "--trace-requests", str(trace), "x"], clean_env(tmp_path / "home"), tmp_path
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "error: unknown --sandbox 'bogus' (read-only, workspace-write, danger-full-access)\n"
    )
    assert not trace.exists()
    assert not (tmp_path / "home").exists()


# --- in-process ---------------------------------------------------------------------------------

runner = CliRunner()


def invoke(args: list[str], home: Path, stdin: str | None = None) -> Result:
    env: dict[str, str | None] = {"MINI_CODEX_HOME": str(home), "OPENAI_API_KEY": None}
    return runner.invoke(app, args, env=env, input=stdin)


def test_the_prompt_can_come_from_stdin(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", RESUME_SCRIPT)
    args = [
        "exec",
        "--model",
        f"scripted:{script}",
        "--json-events=mini-codex",
        "--cd",
        str(tmp_path),
        "-",
    ]
    result = invoke(args, tmp_path / "home", stdin="from stdin\n")
    assert (result.exit_code, result.stderr) == (0, "")
    users = [e["message"] for e in json_lines(result.stdout) if e["type"] == "user_message"]
    assert users == ["from stdin\n"]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            "missing script",
            "error: cannot read model script '{tmp}/missing.jsonl': No such file or directory",
        ),
        ("bad script", "error: {tmp}/bad.jsonl:1: invalid JSON: "),
        ("no prompt", "error: a prompt is required (as an argument, or on stdin with '-')"),
        ("bad cd", "error: --cd {tmp}/nowhere: not a directory"),
        (
            "bad trace path",
            "error: --trace-requests {tmp}/no/dir/t.jsonl: No such file or directory",
        ),
        ("nothing to resume", "error: no recorded sessions under {tmp}/home"),
        ("unknown session", "error: no session or rollout file matches 'feedface'"),
    ],
)
def test_bad_invocations_fail_with_one_line_and_exit_2_writing_nothing(
    tmp_path: Path, case: str, message: str
) -> None:
    good = write_script(tmp_path / "good.jsonl", RESUME_SCRIPT)
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    trace = tmp_path / "trace.jsonl"
    common = ["--json-events=mini-codex", "--cd", str(tmp_path), "--trace-requests", str(trace)]
    model = ["--model", f"scripted:{good}"]
    args = {
        "missing script": ["exec", "--model", f"scripted:{tmp_path}/missing.jsonl", *common, "x"],
        "bad script": ["exec", "--model", f"scripted:{tmp_path}/bad.jsonl", *common, "x"],
        "no prompt": ["exec", *model, *common],
        "bad cd": ["exec", *model, *common, "--cd", f"{tmp_path}/nowhere", "x"],
        "bad trace path": [
            "exec",
            *model,
            *common[:3],
            "--trace-requests",
            f"{tmp_path}/no/dir/t.jsonl",
            "x",
        ],
        "nothing to resume": ["resume", "--last", *model, *common, "x"],
        "unknown session": ["resume", "feedface", "x", *model, *common],
    }[case]

    result = invoke(args, tmp_path / "home", stdin="")

    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(message.format(tmp=tmp_path))
    assert not trace.exists()
    assert not (tmp_path / "home" / "sessions").exists()


SLEEP = "sleep 60"


def test_ctrl_c_aborts_the_turn_and_records_the_aborted_tool_output(tmp_path: Path) -> None:
    """SIGINT interrupts the turn like ``Session.interrupt()``: the running shell call gets the
    aborted output of §5.4 (recorded before the ``<turn_aborted>`` marker), exit code 130."""
    # The command says it started through a FIFO in the cwd (visible in the sandbox); the test
    # waits for that, not for a while.
    command = "echo started > started.fifo; sleep 60"
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "output": [
                    {"type": "function_call", "name": "shell", "arguments": {"command": command}}
                ]
            }
        ],
    )
    os.mkfifo(tmp_path / "started.fifo")
    started = os.open(tmp_path / "started.fifo", os.O_RDONLY | os.O_NONBLOCK)
    args = [
        "exec",
        "--model",
        f"scripted:{script}",
        "--json-events=mini-codex",
        "--cd",
        str(tmp_path),
        "wait",
    ]
    process = subprocess.Popen(
        [str(MINI_CODEX), *args],
        cwd=tmp_path,
        env=clean_env(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        events = []
        for line in process.stdout:
            events.append(json.loads(line))
            if events[-1]["type"] == "tool_call_begin":
                break
        readable, _, _ = select.select([started], [], [], 30)  # the shell runs its command
        assert readable == [started]
        process.send_signal(signal.SIGINT)
        rest, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
        os.close(started)
    events += json_lines(rest)

    assert (process.returncode, stderr) == (130, "")
    assert events[-1]["type"] == "turn_aborted"
    lines = read_rollout(events[0]["rollout_path"]).lines
    items = [line.payload for line in lines if isinstance(line, ResponseItemLine)]
    output, marker = items[-2:]
    assert isinstance(output, FunctionCallOutput)
    assert isinstance(output.output, str)
    assert re.fullmatch(r"Wall time: \d+\.\d seconds\naborted by user", output.output)
    assert marker.to_json()["content"][0]["text"].startswith("<turn_aborted>")
    assert check_rollout(lines).violations == []
