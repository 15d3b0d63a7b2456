"""A batch against a real OpenAI-protocol server on 127.0.0.1: the organization and project the
driver read from ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID`` reach every task's requests, as they do
for ``exec`` (the request path sends them itself since it no longer goes through the SDK)."""

from __future__ import annotations

import sys
from pathlib import Path

from batch_helpers import results, run_cli, write_tasks

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from test_exec_openai import fake


def test_batch_tasks_send_the_organization_and_project_headers(tmp_path: Path) -> None:
    answer = {"type": "message", "id": "msg_1", "role": "assistant",
              "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
    replies = [fake.sse_reply(fake.responses_events([answer], usage=fake.usage(10, 3)))] * 2
    (tmp_path / "ws").mkdir()
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{n}", "prompt": f"task {n}", "workspace": {"dir": "ws"}} for n in range(2)],
    )
    with fake.serve(replies) as server:
        env = {
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "sk-local",
            "OPENAI_ORG_ID": "org-1",
            "OPENAI_PROJECT_ID": "proj-1",
        }
        done = run_cli(
            ["batch", str(tasks), "--out", str(tmp_path / "out"), "--model", "gpt-5.1-codex",
             "--workers", "1", "--json"],
            home=tmp_path / "home",
            cwd=tmp_path,
            env=env,
        )  # fmt: skip
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    assert sorted((r["id"], r["status"]) for r in results(tmp_path / "out")) == [
        ("t0", "completed"),
        ("t1", "completed"),
    ]
    sent = [
        (r.headers.get("authorization"), r.headers.get("openai-organization"),
         r.headers.get("openai-project"))
        for r in requests
    ]  # fmt: skip
    assert sent == [("Bearer sk-local", "org-1", "proj-1")] * 2
