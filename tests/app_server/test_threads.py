"""Many threads in one ``mini-codex app-server``, and the other thread methods.

* Threads run concurrently; every notification names its thread, no command of one thread shows
  up in another's notifications, and a thread whose turn fails (the model answers 400) ends that
  turn ``failed`` with the error while the others complete and the server keeps serving.
* thread/name/set, thread/archive / unarchive, thread/fork, thread/compact/start, turn/steer,
  model/list, config/read and thread/resume of a Codex CLI rollout; every message validated.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from app_server_client import AppServerClient
from app_server_flow import REPO, mini_side
from app_server_schema import check_all
from thread_model import ThreadModelServer

JsonDict = dict[str, Any]
CODEX_ROLLOUT = (
    REPO / "tests/fixtures/rollouts/codex/codex-exec-0.169.0-2026-11-local-fake-server-exec-command"
    "-20-steps.jsonl"
)


def _server() -> ThreadModelServer:
    return ThreadModelServer().start()


def _thread(client: AppServerClient, work: Path) -> str:
    result = client.request(
        "thread/start",
        {"cwd": str(work), "sandbox": "danger-full-access", "approvalPolicy": "never"},
    )
    thread_id: str = result["thread"]["id"]
    return thread_id


def _turn(client: AppServerClient, thread_id: str, text: str) -> str:
    result = client.request(
        "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]}
    )
    turn_id: str = result["turn"]["id"]
    return turn_id


def test_threads_run_concurrently_and_one_failing_never_ends_the_server(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server = _server()
    try:
        with mini_side(tmp_path / "home", server.url).start() as client:
            client.initialize()
            threads = [_thread(client, work) for _ in range(4)]
            turns = {
                thread: _turn(
                    client, thread, f"thread {k}: 3 commands" + (" fail" if k == 3 else "")
                )
                for k, thread in enumerate(threads)
            }
            completed: dict[str, JsonDict] = {}
            while len(completed) < len(threads):
                done, _ = client.wait_method("turn/completed", timeout=120)
                completed[done["params"]["threadId"]] = done["params"]["turn"]
            assert client.request("thread/list", {"limit": 10})["data"] != []
            messages = list(client.messages)
            methods = dict(client.sent_methods)
    finally:
        server.stop()
    assert check_all(messages, methods) == []
    assert {t: completed[t]["status"] for t in threads} == {
        threads[0]: "completed",
        threads[1]: "completed",
        threads[2]: "completed",
        threads[3]: "failed",
    }
    assert "thread 3 was told to fail" in completed[threads[3]]["error"]["message"]
    # Every thread notification carries its own thread and turn; commands stay in their thread.
    commands: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for message in messages:
        params = message.get("params") or {}
        if "threadId" not in params or "id" in message:
            continue
        thread = params["threadId"]
        assert thread in turns
        if "turnId" in params:
            assert params["turnId"] == turns[thread]
        if message["method"] == "item/completed" and params["item"]["type"] == "commandExecution":
            item = params["item"]
            commands[thread].append((item["id"], item["aggregatedOutput"]))
    for k, thread in enumerate(threads[:3]):
        assert commands[thread] == [(f"call_{k}_{n}", f"{k}-{n}\n") for n in range(3)]
    assert threads[3] not in commands


def test_the_other_thread_methods(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    codex_home = tmp_path / "home" / "no-codex" / "sessions" / "2026" / "11" / "29"
    codex_home.mkdir(parents=True)
    shutil.copy(CODEX_ROLLOUT, codex_home / "rollout-2026-11-29T19-31-21-codex.jsonl")
    server = _server()
    try:
        with mini_side(tmp_path / "home", server.url).start() as client:
            client.initialize()
            thread = _thread(client, work)
            _turn(client, thread, "thread 0: 1 command")
            client.wait_method("turn/completed", timeout=60)

            assert client.request("thread/name/set", {"threadId": thread, "name": "first"}) == {}
            renamed, _ = client.wait_method("thread/name/updated")
            assert renamed["params"] == {"threadId": thread, "threadName": "first"}

            fork = client.request("thread/fork", {"threadId": thread})
            forked = fork["thread"]
            assert forked["id"] != thread
            assert forked["forkedFromId"] == thread
            users = [
                i["content"][0]["text"]
                for t in forked["turns"]
                for i in t["items"]
                if i["type"] == "userMessage"
            ]
            assert users == ["thread 0: 1 command"]

            assert client.request("thread/compact/start", {"threadId": thread}) == {}
            compacted, seen = client.wait_method("thread/compacted", timeout=60)
            assert compacted["params"]["threadId"] == thread
            kinds = [
                m["params"]["item"]["type"] for m in seen if m.get("method") == "item/completed"
            ]
            assert "contextCompaction" in kinds
            client.wait_method("turn/completed", timeout=60)

            assert client.request("thread/archive", {"threadId": thread}) == {}
            listed = client.request("thread/list", {})["data"]
            assert thread not in [t["id"] for t in listed]
            archived = client.request("thread/list", {"archived": True})["data"]
            assert [t["id"] for t in archived] == [thread]
            assert archived[0]["name"] == "first"
            restored = client.request("thread/unarchive", {"threadId": thread})
            assert restored["thread"]["id"] == thread

            page = client.request("thread/list", {"limit": 1})
            assert len(page["data"]) == 1
            assert page["nextCursor"] is not None
            rest = client.request("thread/list", {"limit": 5, "cursor": page["nextCursor"]})
            assert rest["nextCursor"] is None
            assert {t["id"] for t in page["data"] + rest["data"]} == {thread, forked["id"]}

            # A Codex CLI rollout (CODEX_HOME) is resumed: copied in, its history shown.
            codex_id = "01a228ca-5f9c-7353-9ff4-83a8bc52a40e"
            resumed = client.request("thread/resume", {"threadId": codex_id, "cwd": str(work)})
            assert resumed["thread"]["id"] == codex_id
            assert resumed["thread"]["turns"] != []
            assert client.request("model/list", {})["data"][0]["isDefault"] is True
            assert client.request("config/read", {})["config"]["model"] == "gpt-5.5"
            messages, methods = list(client.messages), dict(client.sent_methods)
    finally:
        server.stop()
    assert check_all(messages, methods) == []


def test_turn_steer_adds_input_to_the_running_turn(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server = _server()
    try:
        with mini_side(tmp_path / "home", server.url).start() as client:
            client.initialize()
            thread = _thread(client, work)
            turn = _turn(client, thread, "thread 0: 2 commands")
            client.wait_method("item/started", timeout=60)
            wrong = client.request_raw(
                "turn/steer",
                {
                    "threadId": thread,
                    "expectedTurnId": "other",
                    "input": [{"type": "text", "text": "x"}],
                },
            )
            assert wrong["error"]["code"] == -32600
            steered = client.request(
                "turn/steer",
                {
                    "threadId": thread,
                    "expectedTurnId": turn,
                    "input": [{"type": "text", "text": "also this"}],
                },
            )
            assert steered == {"turnId": turn}
            done, _ = client.wait_method("turn/completed", timeout=60)
            assert done["params"]["turn"]["status"] == "completed"
            messages, methods = list(client.messages), dict(client.sent_methods)
    finally:
        server.stop()
    assert check_all(messages, methods) == []
    later = [r.body for r in server.requests[1:]]
    assert any("also this" in str(body["input"]) for body in later)


def test_an_interrupt_right_after_turn_start_ends_the_turn_interrupted(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server = _server()
    try:
        with mini_side(tmp_path / "home", server.url).start() as client:
            client.initialize()
            thread = _thread(client, work)
            turn = _turn(client, thread, "thread 0: 5 commands")
            assert client.request("turn/interrupt", {"threadId": thread, "turnId": turn}) == {}
            done, _ = client.wait_method("turn/completed", timeout=60)
            assert done["params"]["turn"]["status"] == "interrupted"
            again = _turn(client, thread, "thread 0: 1 command")
            done, _ = client.wait_method("turn/completed", timeout=60)
            assert (done["params"]["turn"]["id"], done["params"]["turn"]["status"]) == (
                again,
                "completed",
            )
            messages, methods = list(client.messages), dict(client.sent_methods)
    finally:
        server.stop()
    assert check_all(messages, methods) == []
