"""Shared helpers of the batch tests: scripted models, task files, the CLI, rollout checks."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from mini_codex.batch import JobSpec, ModelChoice, Task, Workspace
from mini_codex.config import Config
from mini_codex.protocol import EventMsgLine, TaskComplete, TurnAborted
from mini_codex.rollout import read_rollout
from mini_codex.rollout.replay.verify import check_rollout

CLI = str(Path(sys.executable).parent / "mini-codex")


def shell(command: str, timeout_ms: int = 60_000) -> dict[str, Any]:
    return {"output": [shell_item(command, timeout_ms)]}


def shell_item(command: str, timeout_ms: int = 60_000) -> dict[str, Any]:
    arguments = {"command": command, "timeout_ms": timeout_ms}
    return {"type": "function_call", "name": "shell", "arguments": arguments}


def answer(text: str, tokens: int = 10) -> dict[str, Any]:
    usage = {"input_tokens": tokens, "output_tokens": 1}
    return {"output": [{"type": "message", "content": text}], "end_turn": True, "usage": usage}


def write_script(path: Path, steps: Sequence[Mapping[str, Any]]) -> str:
    path.write_bytes(b"".join(orjson.dumps(step) + b"\n" for step in steps))
    return f"scripted:{path}"


def write_tasks(path: Path, tasks: Sequence[Mapping[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(task) + b"\n" for task in tasks))
    return path


def spec(task_id: str, model: str, workspace: Path, dest: str, **task: Any) -> JobSpec:
    return JobSpec(
        task=Task(
            id=task_id,
            prompt=task.pop("prompt", "do the task"),
            workspace=Workspace(kind="dir", source=str(workspace)),
            **task,
        ),
        config=Config(),
        model=ModelChoice(model=model),
        dest=dest,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )


def run_cli(
    args: Sequence[str], *, home: Path, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "MINI_CODEX_HOME": str(home), **(env or {})}
    return subprocess.run(
        [CLI, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=300
    )


def results(dest: Path) -> list[dict[str, Any]]:
    data = (dest / "results.jsonl").read_bytes()
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def rollout_ends(path: Path | str) -> str:
    """``complete`` / ``aborted`` / ``none``: how the rollout's last turn ended; also checks the
    ordering invariants hold on it."""
    rollout = read_rollout(Path(path))
    assert check_rollout(rollout.lines).violations == []
    ends = [
        line.payload.type
        for line in rollout.lines
        if isinstance(line, EventMsgLine) and isinstance(line.payload, TaskComplete | TurnAborted)
    ]
    return {"task_complete": "complete", "turn_aborted": "aborted"}.get(
        ends[-1] if ends else "", "none"
    )
