"""The batch runner on the local executor, with scripted models (no network)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import anyio
import orjson
import pytest
from batch_helpers import (
    CLI,
    answer,
    results,
    rollout_ends,
    shell,
    spec,
    write_script,
    write_tasks,
)

from mini_codex.batch import LocalExecutor, ResultStore, TaskResult, run_batch


def _diff_new_file(name: str, text: str) -> str:
    import hashlib

    blob = hashlib.sha1(f"blob {len(text)}\0{text}".encode()).hexdigest()[:7]
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    hunk = "@@ -0,0 +1 @@\n" if len(lines) == 1 else f"@@ -0,0 +1,{len(lines)} @@\n"
    return (
        f"diff --git a/{name} b/{name}\nnew file mode 100644\nindex 0000000..{blob}\n"
        f"--- /dev/null\n+++ b/{name}\n{hunk}{body}"
    )


def test_fifty_tasks_on_two_local_workers(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("same for all\n")
    out = tmp_path / "out"
    specs = []
    for n in range(50):
        model = write_script(
            tmp_path / f"s{n}.jsonl",
            [shell(f"printf 'task {n}\\n' > result.txt"), answer(f"done {n}", tokens=n)],
        )
        specs.append(spec(f"t{n:02d}", model, workspace, str(out)))
    seen: list[TaskResult] = []

    report = anyio.run(
        lambda: run_batch(specs, ResultStore(str(out)), LocalExecutor(2), on_finished=seen.append)
    )

    records = results(out)
    assert sorted(r["id"] for r in records) == [f"t{n:02d}" for n in range(50)]
    assert len(seen) == 50
    assert report.unfinished == []
    for record in records:
        n = int(record["id"][1:])
        rollout = record.pop("rollout")
        assert rollout.startswith(f"{out}/rollouts/{record['id']}/rollout-")
        assert rollout_ends(rollout) == "complete"
        assert record.pop("duration_s") > 0
        assert record == {
            "id": f"t{n:02d}",
            "status": "completed",
            "final_message": f"done {n}",
            "diff": _diff_new_file("result.txt", f"task {n}\n"),
            "token_usage": {
                "input_tokens": n,
                "cached_input_tokens": 0,
                "output_tokens": 1,
                "reasoning_output_tokens": 0,
                "total_tokens": n + 1,
            },
            "attempts": 1,
            "model": "scripted",
            "error": None,
        }
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary["by_status"] == {"completed": 50, "failed": 0, "timeout": 0, "error": 0}
    assert summary["token_usage"]["total_tokens"] == sum(range(50)) + 50
    assert (summary["tasks"], summary["finished"], summary["remaining"]) == (50, 50, 0)
    assert sorted(p.name for p in workspace.iterdir()) == ["keep.txt"]  # the source is untouched


def test_workspaces_are_isolated(tmp_path: Path) -> None:
    """Tasks writing the same path at the same time each see only their own file."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = tmp_path / "out"
    specs = []
    for n in range(4):
        command = (
            f"test ! -e shared.txt || exit 3; printf '{n}\\n' > shared.txt; sleep 0.5; "
            f"test \"$(cat shared.txt)\" = {n} && printf 'mine\\n' > check.txt"
        )
        model = write_script(tmp_path / f"s{n}.jsonl", [shell(command), answer("ok")])
        specs.append(spec(f"t{n}", model, workspace, str(out)))

    anyio.run(lambda: run_batch(specs, ResultStore(str(out)), LocalExecutor(4)))

    diffs = {r["id"]: r["diff"] for r in results(out)}
    assert diffs == {
        f"t{n}": _diff_new_file("check.txt", "mine\n") + _diff_new_file("shared.txt", f"{n}\n")
        for n in range(4)
    }
    assert list(workspace.iterdir()) == []


def test_a_task_that_times_out(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = tmp_path / "out"
    model = write_script(tmp_path / "s.jsonl", [shell("touch started; sleep 60"), answer("x")])
    started = time.monotonic()

    anyio.run(
        lambda: run_batch(
            [spec("slow", model, workspace, str(out), timeout_s=1.0)],
            ResultStore(str(out)),
            LocalExecutor(1),
        )
    )

    assert time.monotonic() - started < 30
    [record] = results(out)
    assert (record["status"], record["error"], record["final_message"]) == (
        "timeout",
        "timed out after 1 s",
        None,
    )
    assert record["diff"] == (
        "diff --git a/started b/started\nnew file mode 100644\nindex 0000000..e69de29\n"
    )
    assert rollout_ends(record["rollout"]) == "aborted"


def test_a_task_whose_model_errors_and_one_that_cannot_start(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = tmp_path / "out"
    failing = write_script(
        tmp_path / "s.jsonl", [{"error": {"kind": "context_window", "message": "too long"}}]
    )
    good = write_script(tmp_path / "g.jsonl", [answer("fine")])
    specs = [
        spec("model-error", failing, workspace, str(out)),
        spec("no-script", f"scripted:{tmp_path / 'missing.jsonl'}", workspace, str(out)),
        spec("good", good, workspace, str(out)),
    ]

    anyio.run(lambda: run_batch(specs, ResultStore(str(out)), LocalExecutor(2)))

    by_id = {r["id"]: r for r in results(out)}
    assert {k: (v["status"], v["final_message"]) for k, v in by_id.items()} == {
        "model-error": ("failed", None),
        "no-script": ("error", None),
        "good": ("completed", "fine"),
    }
    assert "too long" in by_id["model-error"]["error"]
    assert by_id["no-script"]["error"] == (
        f"cannot read model script {str(tmp_path / 'missing.jsonl')!r}: No such file or directory"
    )
    assert by_id["no-script"]["rollout"] is None
    assert rollout_ends(by_id["model-error"]["rollout"]) == "complete"


def test_retry_failed_reruns_only_unfinished_work_and_keeps_one_line_per_id(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = tmp_path / "out"
    good = write_script(tmp_path / "g.jsonl", [answer("fine")])
    bad = write_script(tmp_path / "b.jsonl", [{"error": {"kind": "auth"}}])
    specs = [spec("good", good, workspace, str(out)), spec("bad", bad, workspace, str(out))]
    store = ResultStore(str(out))
    anyio.run(lambda: run_batch(specs, store, LocalExecutor(1)))
    first = {r["id"]: r for r in results(out)}

    again = anyio.run(lambda: run_batch(specs, store, LocalExecutor(1)))
    assert (again.skipped, again.scheduled, results(out)) == (2, 0, list(first.values()))

    retried = anyio.run(lambda: run_batch(specs, store, LocalExecutor(1), retry_failed=True))
    records = results(out)
    assert (retried.skipped, retried.scheduled) == (1, 1)
    assert [r["id"] for r in records] == ["good", "bad"]
    assert records[0] == first["good"]
    assert (records[1]["status"], records[1]["attempts"]) == ("failed", 2)
    assert len(list((out / "rollouts" / "bad").glob("rollout-*.jsonl"))) == 2


def test_a_torn_last_result_line_is_cut_and_that_task_runs_again(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    model = write_script(tmp_path / "g.jsonl", [answer("fine")])
    done = {"id": "a", "status": "completed"}
    (out / "results.jsonl").write_bytes(orjson.dumps(done) + b'\n{"id": "b", "sta')
    specs = [spec("a", model, workspace, str(out)), spec("b", model, workspace, str(out))]

    report = anyio.run(lambda: run_batch(specs, ResultStore(str(out)), LocalExecutor(1)))

    assert (report.skipped, [r.id for r in report.finished]) == (1, ["b"])
    lines = (out / "results.jsonl").read_bytes().splitlines()
    assert [orjson.loads(line)["id"] for line in lines] == ["a", "b"]


def _wait_for_lines(path: Path, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if path.is_file() and len(path.read_bytes().splitlines()) >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {count} lines")


@pytest.mark.parametrize("signals", [1, 2], ids=["stop-scheduling", "abort-running"])
def test_resume_after_ctrl_c_does_no_task_twice(tmp_path: Path, signals: int) -> None:
    """Ctrl-C stops scheduling (once) or aborts running tasks (twice); the rerun finishes the
    rest and no task completes twice."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    lines = []
    for n in range(8):
        model = write_script(
            tmp_path / f"s{n}.jsonl", [shell(f"sleep 1; echo {n} > out.txt"), answer(f"done {n}")]
        )
        lines.append({"id": f"t{n}", "prompt": "go", "workspace": {"dir": "ws"}, "model": model})
    tasks = write_tasks(tmp_path / "tasks.jsonl", lines)
    out = tmp_path / "out"
    env = {**os.environ, "MINI_CODEX_HOME": str(tmp_path / "home")}
    command = [CLI, "batch", str(tasks), "--out", str(out), "--workers", "2", "--json"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_for_lines(out / "results.jsonl", 2, proc)
    for _ in range(signals):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
    stdout, stderr = proc.communicate(timeout=120)

    assert proc.returncode == 130, stderr
    first = results(out)
    assert 2 <= len(first) < 8
    assert [orjson.loads(line)["id"] for line in stdout.splitlines()] == [r["id"] for r in first]
    assert "resume with: mini-codex batch" in stderr
    aborted = [
        path.parent.name
        for path in (out / "rollouts").glob("*/rollout-*.jsonl")
        if rollout_ends(path) == "aborted"
    ]
    if signals == 2:
        assert aborted
        assert not set(aborted) & {r["id"] for r in first}
    else:
        assert aborted == []

    rerun = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    records = results(out)
    assert sorted(r["id"] for r in records) == [f"t{n}" for n in range(8)]
    assert records[: len(first)] == first
    assert all(r["status"] == "completed" for r in records)
    for record in records:
        rollouts = sorted((out / "rollouts" / record["id"]).glob("rollout-*.jsonl"))
        ends = [rollout_ends(path) for path in rollouts]
        assert ends.count("complete") == 1, (record["id"], ends)
        assert record["attempts"] == len(rollouts)

    listed = subprocess.run(
        [CLI, "sessions", "list", "--home", str(out), "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0, listed.stderr
    every = sorted(str(path) for path in (out / "rollouts").glob("*/rollout-*.jsonl"))
    assert sorted(entry["path"] for entry in orjson.loads(listed.stdout)) == every


def test_task_images_reach_the_model_as_input_images(tmp_path: Path) -> None:
    from mini_codex.protocol import Message, ResponseItemLine
    from mini_codex.protocol.items import InputImage, InputText
    from mini_codex.rollout import read_rollout

    workspace = tmp_path / "ws"
    workspace.mkdir()
    image = tmp_path / "shot.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    out = tmp_path / "out"
    model = write_script(tmp_path / "s.jsonl", [answer("seen")])
    job = spec("img", model, workspace, str(out), images=(str(image),), prompt="look")

    anyio.run(lambda: run_batch([job], ResultStore(str(out)), LocalExecutor(1)))

    [record] = results(out)
    lines = read_rollout(Path(record["rollout"])).lines
    users = [
        line.payload.content
        for line in lines
        if isinstance(line, ResponseItemLine)
        and isinstance(line.payload, Message)
        and line.payload.role == "user"
        and any(isinstance(part, InputImage) for part in line.payload.content)
    ]
    assert users == [
        [
            InputText(text="look"),
            InputImage(image_url="data:image/png;base64,iVBORw0KGgpmYWtl"),
        ]
    ]


def test_archive_and_git_workspaces_and_a_missing_one(tmp_path: Path) -> None:
    import shutil
    from dataclasses import replace

    from mini_codex.batch import Task, Workspace

    source = tmp_path / "src"
    source.mkdir()
    (source / "app.txt").write_text("v1\n")
    archive = shutil.make_archive(str(tmp_path / "src"), "gztar", root_dir=source)
    repo = tmp_path / "repo"
    shutil.copytree(source, repo)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=repo, check=True)
    first = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "app.txt").write_text("v2\n")
    subprocess.run([*git, "commit", "-qam", "two"], cwd=repo, check=True)
    out = tmp_path / "out"
    model = write_script(tmp_path / "s.jsonl", [shell("echo x >> app.txt"), answer("ok")])
    base = spec("x", model, source, str(out))
    workspaces = {
        "archive": Workspace("archive", archive),
        "git": Workspace("git", str(repo), commit=first),
        "missing": Workspace("dir", str(tmp_path / "nope")),
    }
    specs = [
        replace(base, task=Task(id=task_id, prompt="p", workspace=workspace))
        for task_id, workspace in workspaces.items()
    ]

    anyio.run(lambda: run_batch(specs, ResultStore(str(out)), LocalExecutor(2)))

    by_id = {r["id"]: r for r in results(out)}
    change = "--- a/app.txt\n+++ b/app.txt\n@@ -1 +1,2 @@\n v1\n+x\n"
    assert by_id["archive"]["status"] == by_id["git"]["status"] == "completed"
    assert by_id["archive"]["diff"].endswith(change)
    assert by_id["git"]["diff"].endswith(change)  # checked out at the first commit
    assert (by_id["missing"]["status"], by_id["missing"]["error"]) == (
        "error",
        f"workspace dir {tmp_path / 'nope'}: not a directory",
    )
