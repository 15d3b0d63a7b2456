"""File changes (an approved patch under ``untrusted``: the fileChange request, the item with its
diff, ``turn/diff/updated``) and plans (``update_plan`` → ``turn/plan/updated`` and a ``plan``
item), every message validated against Codex's schema."""

from __future__ import annotations

import json
from pathlib import Path

from app_server_flow import fake, message, mini_side, reply
from app_server_schema import check_all

PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+first line\n*** End Patch\n"
PLAN = {
    "explanation": "two steps",
    "plan": [
        {"step": "write notes", "status": "completed"},
        {"step": "review", "status": "in_progress"},
    ],
}


def _call(n: int, name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
            "arguments": json.dumps(arguments)}  # fmt: skip


def test_an_approved_patch_and_a_plan(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    replies = [
        reply([_call(1, "update_plan", PLAN)], 1),
        reply([_call(2, "apply_patch", {"input": PATCH})], 2),
        reply([message("Patched.")], 3),
    ]
    with fake.serve(replies) as server, mini_side(tmp_path / "home", server.url).start() as client:
        client.initialize()
        thread = client.request(
            "thread/start",
            {"cwd": str(work), "sandbox": "workspace-write", "approvalPolicy": "untrusted"},
        )["thread"]["id"]
        client.request(
            "turn/start", {"threadId": thread, "input": [{"type": "text", "text": "patch"}]}
        )
        ask, before = client.wait_for(lambda m: "method" in m and "id" in m, timeout=60)
        assert ask["method"] == "item/fileChange/requestApproval"
        assert (ask["params"]["threadId"], ask["params"]["itemId"]) == (thread, "call_2")
        client.respond(ask["id"], {"decision": "accept"})
        done, after = client.wait_method("turn/completed", timeout=60)
        messages, methods = list(client.messages), dict(client.sent_methods)
    assert check_all(messages, methods) == []
    assert done["params"]["turn"]["status"] == "completed"
    assert (work / "notes.txt").read_text() == "first line\n"
    seen = [*before, *after]
    plans = [m["params"] for m in seen if m.get("method") == "turn/plan/updated"]
    assert [(p["explanation"], p["plan"]) for p in plans] == [
        (
            "two steps",
            [
                {"step": "write notes", "status": "completed"},
                {"step": "review", "status": "inProgress"},
            ],
        )
    ]
    completed = [m["params"]["item"] for m in seen if m.get("method") == "item/completed"]
    changes = [item for item in completed if item["type"] == "fileChange"]
    path = str(work / "notes.txt")
    diff = f"diff --git a{path} b{path}\n--- /dev/null\n+++ b{path}\n@@ -0,0 +1 @@\n+first line\n"
    assert changes == [
        {
            "type": "fileChange",
            "id": "call_2",
            "changes": [{"path": path, "kind": {"type": "add"}, "diff": diff}],
            "status": "completed",
        }
    ]
    diffs = [m["params"]["diff"] for m in seen if m.get("method") == "turn/diff/updated"]
    assert diffs == [diff]
    assert [item for item in completed if item["type"] == "plan"] == [
        {
            "type": "plan",
            "id": f"plan-{done['params']['turn']['id']}",
            "text": "- [x] write notes\n- [ ] review",
        }
    ]
