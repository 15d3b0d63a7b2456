"""Bad input gets its JSON-RPC error and the server keeps serving (``mini-codex app-server``).

Each test ends by showing the server still answers (a ``thread/list`` or a whole turn) and that
every message it wrote validates against Codex's schema."""

from __future__ import annotations

import json
import time
from pathlib import Path

from app_server_client import AppServerClient
from app_server_flow import MARKER, call, fake, marker_processes, message, mini_side, reply
from app_server_schema import check_all


def _start(tmp_path: Path, url: str) -> AppServerClient:
    return mini_side(tmp_path / "home", url).start()


def _still_serving(client: AppServerClient) -> None:
    assert client.request("thread/list", {})["data"] == []


def _valid(client: AppServerClient) -> None:
    assert check_all(client.messages, client.sent_methods) == []


def test_requests_before_initialize_are_refused(tmp_path: Path) -> None:
    with fake.serve() as server, _start(tmp_path, server.url) as client:
        assert client.request_raw("thread/list", {}) == {
            "id": 1,
            "error": {"code": -32600, "message": "Not initialized"},
        }
        client.initialize()
        assert client.request_raw("initialize", {"clientInfo": {"name": "again"}}) == {
            "id": 3,
            "error": {"code": -32600, "message": "Already initialized"},
        }
        _still_serving(client)
        _valid(client)


def test_malformed_lines_get_an_error_and_never_end_the_server(tmp_path: Path) -> None:
    with fake.serve() as server, _start(tmp_path, server.url) as client:
        client.initialize()
        client.send_raw(b"{not json\n")
        error = client.next_message(10)
        assert error["id"] is None
        assert error["error"]["code"] == -32700
        assert error["error"]["message"].startswith("Parse error: ")
        client.send_raw(b"[1, 2]\n")
        assert client.next_message(10) == {
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid request: a message must be a JSON object",
            },
        }
        client.send_raw(b'{"id": 77}\n')
        assert client.next_message(10) == {
            "id": 77,
            "error": {
                "code": -32600,
                "message": "Invalid request: neither a request, a notification nor a response",
            },
        }
        _still_serving(client)
        _valid(client)


def test_unknown_and_unimplemented_methods_are_named(tmp_path: Path) -> None:
    with fake.serve() as server, _start(tmp_path, server.url) as client:
        client.initialize()
        assert client.request_raw("nope/method", {})["error"] == {
            "code": -32601,
            "message": "method not found: `nope/method`",
        }
        assert client.request_raw("review/start", {"threadId": "x"})["error"] == {
            "code": -32601,
            "message": "`review/start` is not implemented by mini-codex app-server",
        }
        _still_serving(client)
        _valid(client)


def test_wrong_params_are_refused_naming_the_field(tmp_path: Path) -> None:
    with fake.serve() as server, _start(tmp_path, server.url) as client:
        client.initialize()
        cases = {
            ("thread/start", json.dumps({"cwd": 5})): "`cwd` must be a string",
            ("thread/start", json.dumps({"cwd": "relative"})): "`cwd` must be an absolute path",
            ("thread/start", json.dumps({"sandbox": "everything"})): "`sandbox` 'everything'",
            ("turn/start", json.dumps({"input": []})): "missing field `threadId`",
            ("thread/read", json.dumps([1])): "params must be an object",
        }
        for (method, params), expected in cases.items():
            error = client.request_raw(method, json.loads(params))["error"]
            assert error["code"] == -32602
            assert error["message"].startswith(f"Invalid params for {method}: ")
            assert expected in error["message"]
        error = client.request_raw("turn/start", {"threadId": "no-such", "input": []})["error"]
        assert error == {"code": -32600, "message": "thread no-such is not loaded (thread/resume)"}
        _still_serving(client)
        _valid(client)


def test_a_huge_line_is_refused_without_reading_it_into_memory(tmp_path: Path) -> None:
    with fake.serve() as server, _start(tmp_path, server.url) as client:
        client.initialize()
        huge = b'{"id": 9, "method": "thread/list", "params": {"x": "' + b"a" * (9 << 20) + b'"}}\n'
        client.send_raw(huge)
        error = client.next_message(30)
        assert error["id"] is None
        assert error["error"]["code"] == -32600
        assert (
            f"message of {len(huge)} bytes is over the {8 << 20} limit"
            in (error["error"]["message"])
        )
        _still_serving(client)
        _valid(client)


def test_a_client_vanishing_mid_approval_is_a_denial(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    replies = [reply([call(1, "touch vanished.txt")], 1), reply([message("Not run.")], 2)]
    with fake.serve(replies) as server:
        client = _start(tmp_path, server.url)
        client.initialize()
        thread = client.request(
            "thread/start",
            {"cwd": str(work), "sandbox": "workspace-write", "approvalPolicy": "untrusted"},
        )
        thread_id = thread["thread"]["id"]
        client.request(
            "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]}
        )
        ask, _ = client.wait_for(lambda m: "method" in m and "id" in m, timeout=60)
        assert ask["method"] == "item/commandExecution/requestApproval"
        assert client.close() == 0  # stdin closed while asked: the server ends cleanly
        assert not (work / "vanished.txt").exists()
        _valid(client)
        # The denial is recorded in the rollout, which a new process resumes.
        again = _start(tmp_path, server.url)
        again.initialize()
        read = again.request("thread/read", {"threadId": thread_id, "includeTurns": True})
        assert read["thread"]["id"] == thread_id
        assert again.close() == 0
    rollout = Path(read["thread"]["path"]).read_text()
    decisions = [
        json.loads(line)["payload"]
        for line in rollout.splitlines()
        if '"safety_decision"' in line and '"source":"user"' in line.replace(" ", "")
    ]
    assert [(d["decision"], d["reason"]) for d in decisions] == [
        ("denied", "the client disconnected")
    ]


def test_stdin_eof_mid_turn_interrupts_the_turn_and_leaves_no_process(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with fake.serve([reply([call(1, f"sleep 30; echo {MARKER}")], 1)]) as server:
        client = _start(tmp_path, server.url)
        client.initialize()
        thread = client.request(
            "thread/start",
            {"cwd": str(work), "sandbox": "danger-full-access", "approvalPolicy": "never"},
        )["thread"]
        client.request(
            "turn/start", {"threadId": thread["id"], "input": [{"type": "text", "text": "wait"}]}
        )
        client.wait_for(
            lambda m: (
                m.get("method") == "item/started"
                and m["params"]["item"]["type"] == "commandExecution"
            ),
            timeout=60,
        )
        for _ in range(100):  # item/started comes before the command is spawned
            if marker_processes():
                break
            time.sleep(0.1)
        assert marker_processes() != []  # the command runs
        assert client.close(timeout=20) == 0
    assert marker_processes() == []
    lines = [json.loads(line) for line in Path(thread["path"]).read_text().splitlines()]
    events = [line["payload"]["type"] for line in lines if line["type"] == "event_msg"]
    assert "turn_aborted" in events
    completed = [m for m in client.messages if m.get("method") == "turn/completed"]
    assert [m["params"]["turn"]["status"] for m in completed] == ["interrupted"]
    _valid(client)
