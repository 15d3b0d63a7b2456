"""What the flow must show, on either side (ours or the real Codex): one function both use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_server_flow import FlowResult, marker_processes
from app_server_schema import check_all

JsonDict = dict[str, Any]


def _items(messages: list[JsonDict], method: str, kind: str) -> list[JsonDict]:
    return [
        m["params"]["item"]
        for m in messages
        if m.get("method") == method and m["params"]["item"]["type"] == kind
    ]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text(part) for part in value)
    if isinstance(value, dict):
        return "".join(_text(v) for v in value.values())
    return ""


def check_flow(
    result: FlowResult, work: Path, requests: list[Any], *, output_deltas: bool = True
) -> None:
    """``output_deltas``: the command's output must also stream as deltas (ours always does;
    Codex streams a command that ends at once in its final item only, depending on timing)."""
    # Every message of both processes validates against Codex's own schema.
    for messages, methods in result.runs:
        assert check_all(messages, methods) == []
    first_id, second_id = result.thread_ids
    assert first_id != second_id

    # The command turn: items, deltas, the file written, turn/completed completed.
    turn = result.first_turn
    assert {m["params"]["threadId"] for m in turn if "threadId" in m.get("params", {})} == {
        first_id
    }
    methods = [m.get("method") for m in turn]
    assert methods.index("turn/started") < methods.index("item/started")
    assert [i["content"] for i in _items(turn, "item/completed", "userMessage")] == [
        [{"type": "text", "text": "write it", "text_elements": []}]
    ]
    assert [i["summary"] for i in _items(turn, "item/completed", "reasoning")] == [
        ["Write the file first"]
    ]
    started = _items(turn, "item/started", "commandExecution")
    completed = _items(turn, "item/completed", "commandExecution")
    assert [(i["id"], i["status"]) for i in started] == [("call_1", "inProgress")]
    assert [(i["id"], i["status"], i["exitCode"], i["aggregatedOutput"]) for i in completed] == [
        ("call_1", "completed", 0, "done\n")
    ]
    deltas = [
        m["params"]["delta"]
        for m in turn
        if m.get("method") == "item/commandExecution/outputDelta"
        and m["params"]["itemId"] == "call_1"
    ]
    assert "".join(deltas) == ("done\n" if output_deltas else "".join(deltas))
    assert "".join(deltas) in ("", "done\n")
    message_deltas = [m["params"] for m in turn if m.get("method") == "item/agentMessage/delta"]
    agent = _items(turn, "item/completed", "agentMessage")
    assert [i["text"] for i in agent] == ["Wrote out.txt."]
    assert "".join(d["delta"] for d in message_deltas) == "Wrote out.txt."
    assert {d["itemId"] for d in message_deltas} == {agent[0]["id"]}
    assert "thread/tokenUsage/updated" in methods
    assert turn[-1]["params"]["turn"]["status"] == "completed"
    assert (work / "out.txt").read_text() == "hi\n"

    # The untrusted thread: the command is asked for, declined, not run; the turn still ends.
    ask = result.approval
    assert ask["method"] == "item/commandExecution/requestApproval"
    assert (ask["params"]["threadId"], ask["params"]["itemId"]) == (second_id, "call_2")
    assert "touch declined.txt" in ask["params"]["command"]
    declined = _items(result.declined_turn, "item/completed", "commandExecution")
    assert [(i["id"], i["status"]) for i in declined] == [("call_2", "declined")]
    assert not (work / "declined.txt").exists()
    assert result.declined_turn[-1]["params"]["turn"]["status"] == "completed"
    assert {
        m["params"]["threadId"] for m in result.declined_turn if "threadId" in m.get("params", {})
    } == {second_id}

    # turn/interrupt during `sleep 30`: the turn ends interrupted.
    assert result.sleep_was_running
    assert result.interrupted["params"]["turn"]["status"] == "interrupted"

    # thread/list and thread/read.
    listed = [thread["id"] for thread in result.listed["data"]]
    assert set(listed) >= {first_id, second_id}
    thread = result.read["thread"]
    assert thread["id"] == first_id
    items = [item for t in thread["turns"] for item in t["items"]]
    users = [i["content"][0]["text"] for i in items if i["type"] == "userMessage"]
    assert users == ["write it", "sleep"]
    assert [i["text"] for i in items if i["type"] == "agentMessage"] == ["Wrote out.txt."]
    assert [t["status"] for t in thread["turns"]] == ["completed", "interrupted"]

    # A new process resumes the thread; its next request carries the earlier history.
    assert result.resumed["thread"]["id"] == first_id
    assert result.resumed_turn[-1]["params"]["turn"]["status"] == "completed"
    last_input = requests[-1].body["input"]
    texts = _text(last_input)
    assert "write it" in texts
    assert "again" in texts
    outputs = [i for i in last_input if i.get("type") == "function_call_output"]
    assert "done" in _text([o for o in outputs if o["call_id"] == "call_1"])

    # Both processes ended cleanly and left no command behind.
    assert result.exit_codes == [0, 0]
    assert marker_processes() == []
