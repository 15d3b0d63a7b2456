"""The safety front end of the CLI: ``exec`` without a terminal denies approval requests (a line
on stderr, a clear message to the model), ``-a`` chooses the policy, ``execpolicy check`` prints
the rules' decision as JSON, bad rules are one error line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.protocol import FunctionCallOutput
from mini_codex.rollout.reader import read_rollout

MINI_CODEX = Path(sys.executable).parent / "mini-codex"


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(home)
    env["SHELL"] = "/bin/bash"
    return env


def write_script(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_exec_without_a_terminal_denies_and_tells_the_model(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    script = write_script(
        tmp_path / "script.jsonl",
        [
            {
                "output": [
                    {
                        "type": "function_call",
                        "name": "shell",
                        "arguments": {"command": "touch denied.txt"},
                    }
                ]
            },
            {"output": [{"type": "message", "content": "could not"}]},
        ],
    )
    done = subprocess.run(
        [
            str(MINI_CODEX),
            "exec",
            "-a",
            "untrusted",
            "--model",
            f"scripted:{script}",
            "--cd",
            str(work),
            "make a file",
        ],
        env=clean_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "mini-codex: approval needed, denied (no terminal on stdin): "
        "Run: /bin/bash -c 'touch denied.txt'\n"
    ) in done.stderr
    assert not (work / "denied.txt").exists()
    (rollout,) = (home / "sessions").rglob("rollout-*.jsonl")
    outputs = [
        line.payload.output
        for line in read_rollout(rollout).lines
        if isinstance(line.payload, FunctionCallOutput)
    ]
    assert outputs == [
        "The user denied this command (no terminal to ask the user on; exec denies approval "
        "requests). Do not run it again; find another way or stop."
    ]


def test_an_unknown_approval_policy_is_one_error_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["exec", "-a", "sometimes", "--model", "scripted:x.jsonl", "hi"],
        env={"MINI_CODEX_HOME": str(tmp_path)},
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "error: unknown --ask-for-approval 'sometimes' (untrusted, on-failure, on-request, never)"
    )


RULES = """
prefix_rule(pattern = ["git", ["push", "fetch"]], decision = "prompt")
prefix_rule(pattern = ["git", "push", "--force"], decision = "forbidden",
            justification = "no history rewrites")
"""


def test_execpolicy_check_prints_the_decision(tmp_path: Path) -> None:
    rules = tmp_path / "default.rules"
    rules.write_text(RULES)
    runner = CliRunner()
    forced = runner.invoke(
        app, ["execpolicy", "check", "--rules", str(rules), "--", "git", "push", "--force"]
    )
    assert forced.exit_code == 0, forced.output
    assert json.loads(forced.output) == {
        "matchedRules": [
            {"prefixRuleMatch": {"matchedPrefix": ["git", "push"], "decision": "prompt"}},
            {
                "prefixRuleMatch": {
                    "matchedPrefix": ["git", "push", "--force"],
                    "decision": "forbidden",
                    "justification": "no history rewrites",
                }
            },
        ],
        "decision": "forbidden",
    }
    nothing = runner.invoke(app, ["execpolicy", "check", "-r", str(rules), "--", "ls", "-la"])
    assert nothing.output == '{"matchedRules":[]}\n'


def test_execpolicy_check_refuses_a_bad_rules_file(tmp_path: Path) -> None:
    rules = tmp_path / "bad.rules"
    rules.write_text('prefix_rule(pattern = ["a"], match = ["b"])\n')
    result = CliRunner().invoke(app, ["execpolicy", "check", "--rules", str(rules), "--", "a"])
    assert result.exit_code == 2
    assert result.output == f"error: {rules}:1:1: match example 'b' does not match\n"


def test_resuming_a_session_recorded_in_the_root_needs_cd(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl"
    meta = {"id": "019b0000-0000-7000-8000-000000000000", "cwd": "/", "timestamp": "2026"}
    line = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": meta}
    rollout.write_text(json.dumps(line) + "\n")
    result = CliRunner().invoke(
        app,
        ["resume", str(rollout), "--model", "scripted:none.jsonl", "go on"],
        env={"MINI_CODEX_HOME": str(tmp_path / "home")},
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "error: the session was recorded in /; resuming there would make it the sandbox's "
        "writable root. Pass --cd DIR (--cd / to confirm)."
    )


def test_exec_on_a_terminal_asks_there(tmp_path: Path) -> None:
    import pty

    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    call = {"type": "function_call", "name": "shell", "arguments": {"command": "touch asked.txt"}}
    script = write_script(
        tmp_path / "script.jsonl",
        [{"output": [call]}, {"output": [{"type": "message", "content": "made it"}]}],
    )
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(
            [
                str(MINI_CODEX),
                "exec",
                "-a",
                "untrusted",
                "--model",
                f"scripted:{script}",
                "--cd",
                str(work),
                "make a file",
            ],
            env=clean_env(home),
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.write(master, b"y\n")  # the terminal buffers the answer until the prompt reads it
        _out, err = process.communicate(timeout=120)
    finally:
        os.close(master)
        os.close(slave)
    assert process.returncode == 0, err
    assert "Run: /bin/bash -c 'touch asked.txt'" in err
    assert "[y] yes" in err
    assert (work / "asked.txt").exists()
