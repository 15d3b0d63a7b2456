"""``mini-codex ui --home DEST`` over a batch's rollouts: a real ``mini-codex batch`` run with
scripted models, then the API of a real ``mini-codex ui`` server, for a local DEST and for an
S3 DEST on a real S3-compatible server (moto) on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspector_server import MINI_CODEX, clean_env, serve

from mini_codex.web.inspector import load_file_view, session_document

S3_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _run_batch(root: Path, dest: str, env: dict[str, str] | None = None) -> None:
    """Three tasks, each a shell call then an answer, on two local workers."""
    (root / "ws").mkdir()
    tasks = []
    for n in range(3):
        script = _jsonl(
            root / f"s{n}.jsonl",
            [
                {
                    "output": [
                        {
                            "type": "function_call",
                            "name": "shell",
                            "arguments": {"command": f"echo {n} > n.txt"},
                        }
                    ]
                },
                {"output": [{"type": "message", "content": f"done {n}"}], "end_turn": True},
            ],
        )
        tasks.append(
            {
                "id": f"t{n}",
                "prompt": f"task {n}",
                "workspace": {"dir": "ws"},
                "model": f"scripted:{script}",
            }
        )
    tasks_file = _jsonl(root / "tasks.jsonl", tasks)
    done = subprocess.run(
        [str(MINI_CODEX), "batch", str(tasks_file), "--out", dest, "--workers", "2", "--json"],
        cwd=root,
        env={**clean_env(root / "home"), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _check_served(
    home: Path, dest: str, records: list[dict[str, Any]], local: dict[str, Path], **kwargs: Any
) -> None:
    """The sessions of ``dest`` are listed (one per task, at its rollout's path or URL) and each
    opens to the document its local file gives, ending with the task's final message."""
    for server in serve(home, "--home", dest, **kwargs):
        status, sessions = server.get("/api/sessions")
        assert status == 200
        assert sorted(
            (s["path"], s["first_prompt"], s["turns"], s["error"]) for s in sessions
        ) == sorted((r["rollout"], f"task {r['id'][1:]}", 1, None) for r in records)
        for session in sessions:
            status, document = server.get(f"/api/sessions/{session['id']}")
            assert status == 200
            path = local[session["path"]]
            expected = session_document(session["id"], path, load_file_view(path))
            expected["path"] = session["path"]
            expected.update(parent_thread_id=None, agent_nickname=None, children=[])  # no agents
            assert document == expected
            record = next(r for r in records if r["rollout"] == session["path"])
            assert f'"{record["final_message"]}"' in json.dumps(document)
        assert server.get("/api/sessions/no-such-session")[0] == 404


def test_ui_home_lists_and_opens_a_local_batch(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run_batch(tmp_path, str(out))
    records = _records((out / "results.jsonl").read_text())
    assert sorted((r["id"], r["status"]) for r in records) == [
        (f"t{n}", "completed") for n in range(3)
    ]
    listing = sorted(p.relative_to(out) for p in out.rglob("*"))
    own = tmp_path / "own"

    _check_served(own, str(out), records, {r["rollout"]: Path(r["rollout"]) for r in records})

    assert sorted(p.relative_to(out) for p in out.rglob("*")) == listing  # DEST is read-only
    assert list((own / "indexes").glob("*.sqlite")) != []


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


def test_ui_home_lists_and_opens_an_s3_batch(tmp_path: Path, s3_endpoint: str) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(
        key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint}
    )
    fs.mkdir("ui-bucket")
    env = {**S3_ENV, "AWS_ENDPOINT_URL": s3_endpoint}
    dest = "s3://ui-bucket/run1"
    _run_batch(tmp_path, dest, env)
    fs.invalidate_cache()
    records = _records(fs.cat_file("ui-bucket/run1/results.jsonl").decode())
    copies = {}
    for record in records:
        copy = tmp_path / "copies" / f"{record['id']}.jsonl"
        copy.parent.mkdir(exist_ok=True)
        copy.write_bytes(fs.cat_file(record["rollout"].removeprefix("s3://")))
        copies[record["rollout"]] = copy
    own = tmp_path / "own"

    _check_served(own, dest, records, copies, env=env)

    mirrored = sorted(p.read_bytes() for p in (own / "remote").rglob("rollout-*.jsonl"))
    assert mirrored == sorted(p.read_bytes() for p in copies.values())


def test_ui_home_of_a_missing_bucket_is_one_error_line_naming_the_url(
    tmp_path: Path, s3_endpoint: str
) -> None:
    env = {**clean_env(tmp_path / "own"), **S3_ENV, "AWS_ENDPOINT_URL": s3_endpoint}
    done = subprocess.run(
        [str(MINI_CODEX), "ui", "--port", "0", "--home", "s3://no-such-bucket/x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        "error: no rollouts found under s3://no-such-bucket/x\n",
    )
