"""Compacted sessions both ways between mini-codex and the Codex CLI (0.169.0): whichever side
wrote the first summary, one more compaction keeps exactly one summary.

A summary is a user message starting with Codex's fixed prefix (``SUMMARY_PREFIX``, which
mini-codex now writes too) or with the prefix earlier mini-codex versions wrote
(``LEGACY_SUMMARY_PREFIXES``). Before both sides used one prefix, the other side's summary was
kept as if the user had typed it: two summaries after the second compaction.

* mini-codex resumes ``tests/fixtures/codex_compaction/codex-0.169.0-compacted-once.jsonl`` (a real
  Codex rollout that compacted once; see the README there) and compacts it (``mini-codex
  compact``);
* the real Codex CLI (``node_modules/.bin/codex``) resumes a session that mini-codex recorded and
  compacted, and compacts it again mid-turn (its auto-compaction limit is set low).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mini_codex.context.compaction import LEGACY_SUMMARY_PREFIXES, SUMMARY_PREFIX

REPO = Path(__file__).parents[2]
sys.path[:0] = [str(REPO / "tests" / "models")]

import fake_openai_server as fake  # noqa: E402

FIXTURE = REPO / "tests/fixtures/codex_compaction/codex-0.169.0-compacted-once.jsonl"
CODEX = REPO / "node_modules" / ".bin" / "codex"
MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
PREFIXES = (SUMMARY_PREFIX, *LEGACY_SUMMARY_PREFIXES)


def _message(text: str, item_id: str) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


def _reply(item: dict[str, Any], input_tokens: int) -> fake.Reply:
    return fake.sse_reply(fake.responses_events([item], usage=fake.usage(input_tokens, 10)))


def _provider(url: str) -> str:
    return (
        f'model = "gpt-5.5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{url}"\nwire_api = "responses"\nrequest_max_retries = 0\n'
        "stream_max_retries = 0\n"
    )


def last_compaction(path: Path) -> dict[str, Any]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    compacted = [line["payload"] for line in lines if line["type"] == "compacted"]
    assert compacted
    result: dict[str, Any] = compacted[-1]
    return result


def user_texts(items: list[dict[str, Any]]) -> list[str]:
    return [
        part["text"]
        for item in items
        if item.get("type") == "message" and item.get("role") == "user"
        for part in item["content"]
        if part.get("type") == "input_text"
    ]


def summaries(items: list[dict[str, Any]]) -> list[str]:
    return [text for text in user_texts(items) if text.startswith(PREFIXES)]


def mini(home: Path, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home.parent),
           "MINI_CODEX_HOME": str(home), "OPENAI_API_KEY": "sk-local"}  # fmt: skip
    return subprocess.run(
        [MINI_CODEX, *args], capture_output=True, text=True, env=env, cwd=work, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_the_recorded_codex_summary_starts_with_the_prefix_mini_codex_writes() -> None:
    compacted = last_compaction(FIXTURE)
    assert compacted["message"] == f"{SUMMARY_PREFIX}\nSUMMARY-CODEX-ONE"
    assert summaries(compacted["replacement_history"]) == [compacted["message"]]


def test_mini_codex_compacting_a_codex_compacted_session_keeps_one_summary(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    rollout = tmp_path / "codex-rollout.jsonl"
    shutil.copyfile(FIXTURE, rollout)
    with fake.serve([_reply(_message("SUMMARY-MINI-TWO", "m9"), 300)]) as server:
        (home / "config.toml").write_text(_provider(server.url))
        done = mini(home, work, "compact", str(rollout), "--cd", str(work))
        (summarize,) = server.requests
    assert done.returncode == 0, done.stderr
    history = last_compaction(rollout)["replacement_history"]
    assert summaries(history) == [f"{SUMMARY_PREFIX}\nSUMMARY-MINI-TWO"]
    assert [t for t in user_texts(history) if not t.startswith(PREFIXES)] == [
        "first task",
        "second task",
    ]
    # The summarizer saw Codex's summary (as history), not as a user message to keep.
    assert f"{SUMMARY_PREFIX}\nSUMMARY-CODEX-ONE" in user_texts(summarize.body["input"])


def test_codex_compacting_a_mini_codex_compacted_session_keeps_one_summary(
    tmp_path: Path,
) -> None:
    if shutil.which("node") is None or not CODEX.exists():
        pytest.skip("the Codex CLI is not installed (run `npm ci` at the repository root)")
    base = tmp_path
    mini_home, codex_home, work = base / "mini-home", base / "codex-home", base / "work"
    for path in (mini_home, codex_home, work):
        path.mkdir()

    # mini-codex records a session and compacts it (manual compaction).
    with fake.serve(
        [_reply(_message("done one", "m1"), 50), _reply(_message("SUMMARY-MINI-ONE", "m2"), 60)]
    ) as server:
        (mini_home / "config.toml").write_text(_provider(server.url))
        first = mini(mini_home, work, "exec", "--json", "--skip-git-repo-check", "first task")
        assert first.returncode == 0, first.stderr
        compacted = mini(mini_home, work, "compact", "--last")
        assert compacted.returncode == 0, compacted.stderr
    (rollout,) = mini_home.glob("sessions/**/rollout-*.jsonl")
    thread_id = json.loads(first.stdout.splitlines()[0])["thread_id"]
    assert summaries(last_compaction(rollout)["replacement_history"]) == [
        f"{SUMMARY_PREFIX}\nSUMMARY-MINI-ONE"
    ]

    # Codex resumes it; the first reply reports more tokens than its auto-compaction limit and
    # calls a tool, so Codex compacts before the follow-up request (mid-turn).
    sessions = codex_home / "sessions" / "2026" / "12" / "01"
    sessions.mkdir(parents=True)
    copy = sessions / f"rollout-2026-12-01T10-00-00-{thread_id}.jsonl"
    shutil.copyfile(rollout, copy)
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command",
            "arguments": json.dumps({"cmd": "true"})}  # fmt: skip
    replies = [
        _reply(call, 5000),
        _reply(_message("SUMMARY-CODEX-TWO", "m3"), 300),
        _reply(_message("done two", "m4"), 400),
    ]
    with fake.serve(replies, refuse_websocket=True) as server:
        (codex_home / "config.toml").write_text(
            _provider(server.url).replace(
                'model_provider = "fake"\n',
                'model_provider = "fake"\nmodel_auto_compact_token_limit = 2000\n',
            )
        )
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base),
               "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "sk-local"}  # fmt: skip
        done = subprocess.run(
            [str(CODEX), "exec", "resume", "--skip-git-repo-check", "--json",
             "--dangerously-bypass-approvals-and-sandbox", thread_id, "second task"],
            capture_output=True, text=True, env=env, cwd=work, timeout=180,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        requests = server.requests
    assert done.returncode == 0, done.stderr
    assert len(requests) == 3
    # Codex saw mini-codex's history on resume (its summary included) ...
    assert f"{SUMMARY_PREFIX}\nSUMMARY-MINI-ONE" in user_texts(requests[0].body["input"])
    # ... and its compaction kept exactly one summary: its own.
    history = last_compaction(copy)["replacement_history"]
    assert summaries(history) == [f"{SUMMARY_PREFIX}\nSUMMARY-CODEX-TWO"]
    assert "first task" in user_texts(history)
    assert "second task" in user_texts(history)
