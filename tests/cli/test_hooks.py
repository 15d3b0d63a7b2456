"""Hooks: ``notify`` with Codex's ``agent-turn-complete`` payload, and the command hooks of
``[hooks]`` (SessionStart, PreToolUse that may deny, PostToolUse, Stop), each with a timeout and
never fatal. Driven through ``mini-codex exec --json`` with a scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
PY = sys.executable
DUMP = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read() + chr(10))"


def dump_hook(target: Path) -> str:
    """A hook command appending its stdin JSON to ``target`` (one line per run)."""
    return f'{PY} -c "{DUMP}" {target}'


def run(
    tmp_path: Path, config: str, script: list[dict[str, Any]]
) -> tuple[int, list[dict[str, Any]], str]:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(config)
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in script))
    trace = tmp_path / "trace.jsonl"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "MINI_CODEX_HOME": str(home)}
    done = subprocess.run(
        [
            MINI_CODEX,
            "exec",
            "--json",
            "--model",
            f"scripted:{tmp_path / 's.jsonl'}",
            "-s",
            "danger-full-access",
            "-C",
            str(work),
            "--trace-requests",
            str(trace),
            "do it",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, lines, done.stderr


def tool_outputs(tmp_path: Path) -> list[Any]:
    requests = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    return [
        item["output"] for item in requests[-1]["input"] if item["type"] == "function_call_output"
    ]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


SHELL_THEN_DONE = [
    {
        "output": [
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "call_1",
                "arguments": {"command": "touch made.txt && echo made"},
            }
        ]
    },
    {"output": [{"type": "message", "content": "finished"}]},
]


def test_notify_runs_with_the_agent_turn_complete_payload(tmp_path: Path) -> None:
    out = tmp_path / "notified.json"
    write = "import sys; open(sys.argv[1], 'w').write(sys.argv[2])"
    config = f'notify = ["{PY}", "-c", "{write}", "{out}"]\n'
    code, lines, stderr = run(
        tmp_path, config, [{"output": [{"type": "message", "content": "hi there"}]}]
    )
    assert (code, stderr) == (0, "")
    payload = json.loads(out.read_text())
    assert payload == {
        "type": "agent-turn-complete",
        "thread-id": lines[0]["thread_id"],
        "turn-id": payload["turn-id"],
        "cwd": str(tmp_path / "work"),
        "input-messages": ["do it"],
        "last-assistant-message": "hi there",
    }
    assert len(payload["turn-id"]) == 36


def test_pre_tool_use_hook_denies_with_exit_code_2(tmp_path: Path) -> None:
    config = """
[[hooks.PreToolUse]]
matcher = "shell"
hooks = [{ type = "command", command = "echo 'no shell today' >&2; exit 2", timeout = 10 }]
"""
    code, lines, stderr = run(tmp_path, config, SHELL_THEN_DONE)
    assert (code, stderr) == (0, "")
    assert not (tmp_path / "work" / "made.txt").exists()
    assert tool_outputs(tmp_path) == ["Tool call blocked by PreToolUse hook: no shell today"]
    completed = [line["item"] for line in lines if line["type"] == "item.completed"]
    assert completed[0]["type"] == "command_execution"
    assert completed[0]["status"] == "failed"


def test_pre_tool_use_json_deny_and_non_matching_hooks(tmp_path: Path) -> None:
    decision = {"permissionDecision": "deny", "permissionDecisionReason": "read-only day"}
    deny = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}})
    config = f"""
[[hooks.PreToolUse]]
matcher = "apply_.*"
hooks = [{{ command = "exit 2" }}]

[[hooks.PreToolUse]]
matcher = "sh.*"
hooks = [{{ command = '''echo '{deny}' ''' }}]
"""
    code, _, stderr = run(tmp_path, config, SHELL_THEN_DONE)
    assert (code, stderr) == (0, "")
    assert tool_outputs(tmp_path) == ["Tool call blocked by PreToolUse hook: read-only day"]
    assert not (tmp_path / "work" / "made.txt").exists()


def test_session_start_post_tool_use_and_stop_hooks_get_their_payloads(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    config = f"""
[[hooks.SessionStart]]
hooks = [{{ command = '''{dump_hook(log)}''' }}]
[[hooks.PreToolUse]]
hooks = [{{ command = '''{dump_hook(log)}''' }}]
[[hooks.PostToolUse]]
matcher = "*"
hooks = [{{ command = '''{dump_hook(log)}''' }}]
[[hooks.Stop]]
hooks = [{{ command = '''{dump_hook(log)}''' }}]
"""
    code, lines, stderr = run(tmp_path, config, SHELL_THEN_DONE)
    assert (code, stderr) == (0, "")
    assert (tmp_path / "work" / "made.txt").exists()
    thread = lines[0]["thread_id"]
    common = {"session_id": thread, "cwd": str(tmp_path / "work")}
    start, pre, post, stop = records(log)
    assert start == {"hook_event_name": "SessionStart", **common, "source": "startup"}
    tool = {
        "tool_name": "shell",
        "tool_input": {"command": "touch made.txt && echo made"},
        "tool_use_id": "call_1",
    }
    assert pre == {"hook_event_name": "PreToolUse", **common, **tool}
    assert post["tool_response"]["success"] is True
    assert post["tool_response"]["output"].startswith("Exit code: 0\n")
    assert post == {
        "hook_event_name": "PostToolUse",
        **common,
        **tool,
        "tool_response": post["tool_response"],
    }
    assert stop == {
        "hook_event_name": "Stop",
        **common,
        "turn_id": stop["turn_id"],
        "last_assistant_message": "finished",
    }


def test_failing_and_hanging_hooks_are_logged_never_fatal(tmp_path: Path) -> None:
    config = """
notify = ["/nonexistent/notifier"]

[[hooks.PreToolUse]]
hooks = [
  { command = "echo broken >&2; exit 1" },
  { command = "sleep 30", timeout = 0.5 },
]
"""
    code, lines, stderr = run(tmp_path, config, SHELL_THEN_DONE)
    assert (code, stderr) == (0, "")
    assert (tmp_path / "work" / "made.txt").exists()  # the call ran
    items = [line["item"] for line in lines if line["type"] == "item.completed"]
    warnings = [item["message"] for item in items if item["type"] == "error"]
    assert warnings == [
        "PreToolUse hook `echo broken >&2; exit 1` failed: exit code 1: broken",
        "PreToolUse hook `sleep 30` failed: timed out after 0.5s",
        "notify `/nonexistent/notifier` failed: cannot start: No such file or directory",
    ]
    # notify runs in the background after the turn: its warning follows turn.completed
    assert [line["type"] for line in lines[-2:]] == ["turn.completed", "item.completed"]
