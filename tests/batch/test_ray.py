"""The Ray executor against a real local Ray cluster started by this module.

The cluster (a head node and one extra worker node, one CPU each) runs inside a loopback-only
network namespace held by a ``sleep`` process, so nothing listens outside it and its ports cannot
clash with anything else on the machine; the batch CLI joins it with ``nsenter``. It is stopped by
killing exactly the processes in that namespace (never ``ray stop``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import CLI, answer, results, rollout_ends, shell, write_script, write_tasks

RAY = str(Path(sys.executable).parent / "ray")
ENV = {"RAY_AUTH_MODE": "disabled", "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}


@dataclass
class Cluster:
    holder: subprocess.Popen[bytes]
    temp: str
    address: str

    @property
    def netns(self) -> str:
        return f"/proc/{self.holder.pid}/ns/net"

    def run(self, args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **ENV, **kwargs.pop("env", {})}
        return subprocess.run(
            ["nsenter", f"--net={self.netns}", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=kwargs.pop("timeout", 300),
            **kwargs,
        )

    def pids(self) -> list[int]:
        """Every process in the cluster's network namespace (all started by this module)."""
        ns = os.readlink(self.netns)
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.readlink(f"/proc/{entry}/ns/net") == ns:
                        found.append(int(entry))
                except OSError:
                    pass
        return found

    def kill_node(self, ip: str) -> list[int]:
        """SIGKILL the processes of the node at ``ip`` and their descendants."""
        pids = set(self.pids())
        cmdlines = {pid: _cmdline(pid) for pid in pids}
        doomed = {pid for pid, cmd in cmdlines.items() if f"={ip}" in cmd or f" {ip}" in cmd}
        parents = {pid: _ppid(pid) for pid in pids}
        grew = True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in doomed} - doomed
            doomed |= more
            grew = bool(more)
        doomed.discard(self.holder.pid)
        for pid in doomed:
            _kill(pid)
        return sorted(doomed)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _start_node(cluster: Cluster, args: list[str]) -> str:
    done = cluster.run([RAY, "start", *args, "--disable-usage-stats", f"--temp-dir={cluster.temp}"])
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        pytest.skip("needs unshare and nsenter (util-linux)")
    holder = subprocess.Popen(
        ["unshare", "-n", "sh", "-c", "ip link set lo up && exec sleep 100000"],
        start_new_session=True,
    )
    temp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths have a limit
    made = Cluster(holder=holder, temp=temp, address="")
    try:
        deadline = time.monotonic() + 10
        while os.readlink(made.netns) == os.readlink("/proc/self/ns/net"):
            assert holder.poll() is None, "unshare -n failed"
            assert time.monotonic() < deadline, "unshare -n did not make a namespace"
            time.sleep(0.05)
        head = _start_node(
            made,
            ["--head", "--port=0", "--num-cpus=1", "--node-ip-address=127.0.0.1",
             "--include-dashboard=false"],
        )  # fmt: skip
        found = re.search(r"ray start --address='([0-9.]+:[0-9]+)'", head)
        assert found, head
        made.address = found[1]
        _start_node(
            made, [f"--address={made.address}", "--num-cpus=1", "--node-ip-address=127.0.0.2"]
        )
        yield made
    finally:
        for pid in made.pids():
            if pid != holder.pid:
                _kill(pid)
        holder.kill()
        holder.wait()
        shutil.rmtree(temp, ignore_errors=True)


def _tasks(tmp_path: Path, count: int, command: str) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "README").write_text("start\n")
    lines = []
    for n in range(count):
        model = write_script(
            tmp_path / f"s{n}.jsonl",
            [shell(command.format(n=n)), answer(f"done {n}", tokens=n + 1)],
        )
        lines.append(
            {"id": f"t{n}", "prompt": f"task {n}", "workspace": {"dir": "ws"}, "model": model}
        )
    return write_tasks(tmp_path / "tasks.jsonl", lines)


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in ("duration_s", "rollout")}


def _start_ray_batch(
    cluster: Cluster, tasks: Path, out: Path, tmp_path: Path
) -> subprocess.Popen[str]:
    """``mini-codex batch --executor ray`` inside the cluster's namespace, in the background."""
    env = {**os.environ, **ENV, "MINI_CODEX_HOME": str(tmp_path / "home")}
    return subprocess.Popen(
        ["nsenter", f"--net={cluster.netns}", CLI, "batch", str(tasks), "--out", str(out),
         "--executor", "ray", "--ray-address", cluster.address, "--workers", "2", "--json"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def test_ray_results_equal_the_local_executors(cluster: Cluster, tmp_path: Path) -> None:
    tasks = _tasks(tmp_path, 4, "echo {n} >> README && echo new {n} > new.txt && rm -f gone")
    home = tmp_path / "home"
    env = {"MINI_CODEX_HOME": str(home)}
    on_ray = cluster.run(
        [CLI, "batch", str(tasks), "--out", str(tmp_path / "ray"), "--executor", "ray",
         "--ray-address", cluster.address, "--workers", "2", "--json"],
        cwd=tmp_path,
        env=env,
    )  # fmt: skip
    assert on_ray.returncode == 0, on_ray.stderr
    local = subprocess.run(
        [CLI, "batch", str(tasks), "--out", str(tmp_path / "local"), "--workers", "2"],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    assert local.returncode == 0, local.stderr

    ray_records = sorted(results(tmp_path / "ray"), key=lambda r: r["id"])
    local_records = sorted(results(tmp_path / "local"), key=lambda r: r["id"])
    assert [_comparable(r) for r in ray_records] == [_comparable(r) for r in local_records]
    assert [r["status"] for r in ray_records] == ["completed"] * 4
    for record in ray_records:
        assert rollout_ends(record["rollout"]) == "complete"


def test_a_worker_node_killed_mid_task_is_retried_once(cluster: Cluster, tmp_path: Path) -> None:
    tasks = _tasks(tmp_path, 2, "sleep 8; echo {n} > slow.txt")
    out = tmp_path / "out"
    proc = _start_ray_batch(cluster, tasks, out, tmp_path)
    try:
        deadline = time.monotonic() + 120
        while len(list(out.glob("rollouts/*/.attempt-*"))) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the two tasks never both started"
            time.sleep(0.1)
        time.sleep(2)  # both are inside their `sleep 8` now
        killed = cluster.kill_node("127.0.0.2")
        assert killed
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    assert proc.returncode == 0, (stderr, (out / "results.jsonl").read_text())
    records = results(out)
    assert sorted(r["id"] for r in records) == ["t0", "t1"]  # exactly one line per task
    assert sorted(r["attempts"] for r in records) == [1, 2]
    assert [r["status"] for r in records] == ["completed", "completed"]
    assert len(stdout.splitlines()) == 2
    kept = sorted(out.glob("rollouts/*/rollout-*.jsonl"))
    assert sorted(str(p) for p in kept) == sorted(r["rollout"] for r in records)
    assert [rollout_ends(path) for path in kept] == ["complete", "complete"]


def test_ctrl_c_twice_aborts_ray_tasks_without_recording_them(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Runs after the node kill (only the head is left): the running task is interrupted, its
    rollout records the abort, nothing is recorded for it, and the command says how to resume."""
    tasks = _tasks(tmp_path, 2, "sleep 60")
    out = tmp_path / "out"
    proc = _start_ray_batch(cluster, tasks, out, tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("rollouts/*/.attempt-*")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no task started"
            time.sleep(0.1)
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    assert proc.returncode == 130, stderr
    assert stdout == ""
    assert not (out / "results.jsonl").exists() or results(out) == []
    assert "resume with: mini-codex batch" in stderr
    rollouts = list(out.glob("rollouts/*/rollout-*.jsonl"))
    assert rollouts
    assert [rollout_ends(path) for path in rollouts] == ["aborted"] * len(rollouts)
