"""A batch whose DEST is object storage: a real S3-compatible server (moto) on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from batch_helpers import answer, rollout_ends, run_cli, shell, write_script, write_tasks

ENDPOINT_ENV = "AWS_ENDPOINT_URL"


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def _fs(endpoint: str):  # type: ignore[no-untyped-def]
    import s3fs

    return s3fs.S3FileSystem(
        key="testing", secret="testing", client_kwargs={"endpoint_url": endpoint}
    )


def test_results_and_rollouts_in_s3_read_back_by_sessions_list_and_verify(
    tmp_path: Path, s3_endpoint: str
) -> None:
    fs = _fs(s3_endpoint)
    fs.mkdir("batch-bucket")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    tasks = []
    for n in range(3):
        model = write_script(
            tmp_path / f"s{n}.jsonl", [shell(f"echo {n} > n.txt"), answer(f"done {n}")]
        )
        tasks.append(
            {"id": f"t{n}", "prompt": f"task {n}", "workspace": {"dir": "ws"}, "model": model}
        )
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", tasks)
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        ENDPOINT_ENV: s3_endpoint,
    }
    home = tmp_path / "home"
    dest = "s3://batch-bucket/run1"

    done = run_cli(
        ["batch", str(tasks_file), "--out", dest, "--workers", "2", "--json"],
        home=home,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr

    fs.invalidate_cache()
    records = [
        orjson.loads(line) for line in fs.cat_file("batch-bucket/run1/results.jsonl").splitlines()
    ]
    assert sorted((r["id"], r["status"], r["final_message"]) for r in records) == [
        (f"t{n}", "completed", f"done {n}") for n in range(3)
    ]
    for record in records:
        assert record["rollout"].startswith(f"{dest}/rollouts/{record['id']}/rollout-")
    summary = orjson.loads(fs.cat_file("batch-bucket/run1/summary.json"))
    assert summary["by_status"]["completed"] == 3

    listed = run_cli(
        ["sessions", "list", "--home", dest, "--json"], home=home, cwd=tmp_path, env=env
    )
    assert listed.returncode == 0, listed.stderr
    sessions = orjson.loads(listed.stdout)
    assert sorted((s["path"], s["first_user_message"], s["turns"]) for s in sessions) == sorted(
        (r["rollout"], f"task {r['id'][1:]}", 1) for r in records
    )

    for record in records:
        verified = run_cli(
            ["rollout", "verify", record["rollout"]], home=home, cwd=tmp_path, env=env
        )
        assert verified.returncode == 0, verified.stderr
        assert verified.stdout.startswith("ok: ")
        local = tmp_path / "copy.jsonl"
        local.write_bytes(fs.cat_file(record["rollout"].removeprefix("s3://")))
        assert rollout_ends(local) == "complete"

    again = run_cli(
        ["batch", str(tasks_file), "--out", dest, "--json"], home=home, cwd=tmp_path, env=env
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == ""  # everything was finished: nothing runs twice
    fs.invalidate_cache()
    assert fs.cat_file("batch-bucket/run1/results.jsonl").splitlines() == [
        orjson.dumps(r) for r in records
    ]


def test_a_missing_bucket_is_one_clear_error_before_any_task(
    tmp_path: Path, s3_endpoint: str
) -> None:
    (tmp_path / "ws").mkdir()
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": "a", "prompt": "x", "workspace": {"dir": "ws"}, "model": "scripted:none"}],
    )
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        ENDPOINT_ENV: s3_endpoint,
    }
    done = run_cli(
        ["batch", str(tasks), "--out", "s3://no-such-bucket/x"],
        home=tmp_path / "home",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: cannot write s3://no-such-bucket/x/.mini-codex-batch: ")
    assert len(done.stderr.splitlines()) == 1


def test_verify_of_a_missing_remote_rollout_is_one_clear_line(
    tmp_path: Path, s3_endpoint: str
) -> None:
    fs = _fs(s3_endpoint)
    fs.mkdir("empty-bucket")
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        ENDPOINT_ENV: s3_endpoint,
    }
    url = "s3://empty-bucket/rollouts/x/rollout-2026-01-01T00-00-00-x.jsonl"
    done = run_cli(["rollout", "verify", url], home=tmp_path / "home", cwd=tmp_path, env=env)
    assert (done.returncode, done.stderr) == (2, f"error: {url}: no such file\n")


def test_sessions_list_of_a_missing_bucket_is_one_line_naming_the_url(
    tmp_path: Path, s3_endpoint: str
) -> None:
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        ENDPOINT_ENV: s3_endpoint,
    }
    dest = "s3://no-such-bucket/run"
    done = run_cli(
        ["sessions", "list", "--home", dest], home=tmp_path / "home", cwd=tmp_path, env=env
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        f"error: no rollouts found under {dest}\n",
    )


def test_each_result_is_one_small_object_until_the_run_folds_them(s3_endpoint: str) -> None:
    from mini_codex.batch.store import ResultStore

    fs = _fs(s3_endpoint)
    fs.mkdir("parts-bucket")
    options = {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": s3_endpoint},
    }
    store = ResultStore("s3://parts-bucket/run", options)
    store.prepare()
    records: list[dict[str, object]] = []
    for n in range(12):
        record = {"id": f"t{n}", "status": "completed", "final_message": "x" * 100}
        store.append_result(record, list(records))
        records.append(record)
    fs.invalidate_cache()
    parts = sorted(fs.ls("parts-bucket/run/results.d"))
    # One object per result holding just its own line: O(N) bytes uploaded, not O(N^2).
    assert [fs.cat_file(p) for p in parts] == [orjson.dumps(r) + b"\n" for r in records]
    assert not fs.exists("parts-bucket/run/results.jsonl")

    # A driver that dies here loses nothing: a new store reads every result back, in order.
    reopened = ResultStore("s3://parts-bucket/run", options)
    assert reopened.read_results() == records

    reopened.fold_results()
    fs.invalidate_cache()
    assert fs.cat_file("parts-bucket/run/results.jsonl").splitlines() == [
        orjson.dumps(r) for r in records
    ]
    assert not fs.exists("parts-bucket/run/results.d")
    assert reopened.read_results() == records
