"""The app-server's thread notifications for sub-agent tool calls: ``item/started`` and
``item/completed`` of ``collabAgentToolCall`` items, for the scenario the Codex CLI was recorded
with (``tests/fixtures/codex_subagents/record.py``, the same scripted server)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
sys.path[:0] = [
    str(REPO / "tests" / "models"),
    str(REPO / "tests" / "fixtures" / "codex_subagents"),
]

from app_server_flow import mini_side, provider_config  # noqa: E402
from record import PARENT, Responder  # noqa: E402


def test_collab_tool_calls_are_thread_items(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server = Responder().start()
    try:
        side = mini_side(tmp_path / "home", server.url)
        (tmp_path / "home" / "config.toml").write_text(
            provider_config(server.url) + "\n[features]\nmulti_agent = true\n"
        )
        client = side.start()
        try:
            client.initialize()
            thread = client.request(
                "thread/start",
                {"cwd": str(work), "sandbox": "danger-full-access", "approvalPolicy": "never"},
            )["thread"]["id"]
            client.request(
                "turn/start", {"threadId": thread, "input": [{"type": "text", "text": PARENT}]}
            )
            done, seen = client.wait_for(lambda m: m.get("method") == "turn/completed", timeout=120)
        finally:
            client.close()
    finally:
        server.stop()
    assert done["params"]["turn"]["status"] == "completed"
    collab = [
        (m["method"], m["params"]["item"])
        for m in seen
        if m.get("method") in ("item/started", "item/completed")
        and m["params"]["item"]["type"] == "collabAgentToolCall"
    ]
    completed = [item for method, item in collab if method == "item/completed"]
    assert [item["tool"] for item in completed] == [
        "spawnAgent", "spawnAgent", "wait", "wait", "closeAgent", "closeAgent",
        "wait", "sendInput", "wait", "closeAgent",
    ]  # fmt: skip
    assert [method for method, _ in collab] == ["item/started", "item/completed"] * 10
    spawn_a = completed[0]
    (child_a,) = spawn_a["receiverThreadIds"]
    assert spawn_a == {
        "type": "collabAgentToolCall",
        "id": spawn_a["id"],
        "tool": "spawnAgent",
        "status": "completed",
        "senderThreadId": thread,
        "receiverThreadIds": [child_a],
        "prompt": "CHILD-A: run `echo alpha` and answer with its output.",
        "model": None,
        "reasoningEffort": None,
        "agentsStates": {child_a: {"status": "pendingInit", "message": None}},
    }
    assert completed[2]["agentsStates"] == {
        child_a: {"status": "completed", "message": "alpha-result"}
    }
