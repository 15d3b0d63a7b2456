"""A large tasks file starts its first task at once (tasks are resolved lazily), and a second
Ctrl-C also stops a task whose workspace is still being copied."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import orjson
import pytest
from batch_helpers import CLI, answer, results, write_script

from mini_codex.batch.lazy import TaskFile
from mini_codex.errors import ConfigError


def _tasks_file(path: Path, count: int, model: str, workspace: str) -> Path:
    with path.open("wb") as out:
        for n in range(count):
            line = {"id": f"t{n:06d}", "prompt": "go", "workspace": {"dir": workspace}}
            line["model"] = model
            out.write(orjson.dumps(line) + b"\n")
    return path


def test_a_100k_line_tasks_file_starts_its_first_task_before_reading_the_rest(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    model = write_script(tmp_path / "s.jsonl", [answer("ok")])
    tasks = _tasks_file(tmp_path / "tasks.jsonl", 100_000, model, "ws")
    out = tmp_path / "out"
    env = {**os.environ, "MINI_CODEX_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [CLI, "batch", str(tasks), "--out", str(out), "--json"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = orjson.loads(proc.stdout.readline())
        assert (first["id"], first["status"]) == ("t000000", "completed")
        # Memory for 100k tasks: their ids and offsets, not 100k resolved specs (~14 KB each).
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak_kib = int(next(r for r in status.splitlines() if r.startswith("VmHWM:")).split()[1])
        assert peak_kib < 400 * 1024, peak_kib
    finally:
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert results(out)[0]["id"] == "t000000"


def test_a_bad_line_far_into_the_file_is_reported_when_reached(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    lines = [
        orjson.dumps({"id": f"t{n}", "prompt": "go", "workspace": {"dir": "."}}) for n in range(5)
    ]
    lines.append(orjson.dumps({"id": "bad", "prompt": "", "workspace": {"dir": "."}}))
    tasks.write_bytes(b"\n".join(lines) + b"\n")
    loaded = TaskFile(tasks)
    assert loaded.ids == ["t0", "t1", "t2", "t3", "t4", "bad"]
    assert loaded[4].id == "t4"
    with pytest.raises(ConfigError) as bad:
        loaded[5]
    assert str(bad.value) == f"""{tasks}:6: task 'bad': "prompt" must be a non-empty string"""
    duplicate = tmp_path / "dup.jsonl"
    duplicate.write_bytes(b"\n".join([lines[0], b"", lines[0]]) + b"\n")
    reading = iter(TaskFile(duplicate))
    assert next(reading).id == "t0"  # the first runs; the duplicate is refused when reached
    with pytest.raises(ConfigError) as twice:
        next(reading)
    assert str(twice.value) == f"{duplicate}:3: duplicate task id 't0' (first on line 1)"


def test_a_second_ctrl_c_stops_a_task_whose_workspace_is_being_copied(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    count = 30_000
    for n in range(count // 1000):
        folder = workspace / f"d{n}"
        folder.mkdir(parents=True)
        for m in range(1000):
            (folder / f"f{m}.txt").write_bytes(b"x")
    model = write_script(tmp_path / "s.jsonl", [answer("ok")])
    tasks = _tasks_file(tmp_path / "tasks.jsonl", 1, model, "ws")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "out"
    env = {**os.environ, "MINI_CODEX_HOME": str(tmp_path / "home"), "TMPDIR": str(scratch)}
    command = [CLI, "batch", str(tasks), "--out", str(out), "--json", "--keep-workspaces"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not list(scratch.glob("mini-codex-batch-t000000-*/workspace/d*")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stdout == ""  # interrupted: not recorded, the next run does it again
    assert not (out / "results.jsonl").exists() or results(out) == []
    [copy] = scratch.glob("mini-codex-batch-t000000-*/workspace")
    copied = sum(1 for path in copy.rglob("*.txt"))
    assert copied < count  # the copy stopped; it did not run to the end first
