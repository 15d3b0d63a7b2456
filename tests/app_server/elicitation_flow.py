"""MCP elicitation through an app-server, driven the same way against ours and the real Codex.

One thread (``approvalPolicy`` given, ``danger-full-access``) with ``server-everything`` on
stdio; each turn the scripted model calls ``trigger-elicitation-request`` (namespaced
``mcp__everything`` / ``trigger_elicitation_request``, call id ``call_K``) and then answers
``turn K done``. ``run_elicitation`` answers the K-th ``mcpServer/elicitation/request`` with the
K-th entry of ``answers`` (a result object, or ``ERROR`` for a JSON-RPC error answer) and returns
every message, the server request of each turn, what the model got back for each call and the
server's ``warning`` notifications.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app_server_flow import REPO, Side, fake, message, reply

JsonDict = dict[str, Any]
EVERYTHING = REPO / "node_modules" / ".bin" / "mcp-server-everything"
ERROR = {"code": -32000, "message": "the user closed the dialog"}
VALID = {"name": "Ada Lovelace", "check": True, "integer": 7}


def elicitation_replies(turns: int) -> list[fake.Reply]:
    replies = []
    for k in range(1, turns + 1):
        call = {"type": "function_call", "id": f"fc_{k}", "call_id": f"call_{k}",
                "name": "trigger_elicitation_request", "namespace": "mcp__everything",
                "arguments": "{}"}  # fmt: skip
        replies += [reply([call], 2 * k - 1), reply([message(f"turn {k} done", k)], 2 * k)]
    return replies


def add_everything(side: Side) -> None:
    home = side.env.get("MINI_CODEX_HOME") or side.env["CODEX_HOME"]
    with open(Path(home) / "config.toml", "a") as handle:
        handle.write(
            f'\n[mcp_servers.everything]\ncommand = "{EVERYTHING}"\nargs = ["stdio"]\n'
            'required = true\ndefault_tools_approval_mode = "approve"\n'
        )


@dataclass
class ElicitationResult:
    messages: list[JsonDict] = field(default_factory=list)
    methods: dict[Any, str] = field(default_factory=dict)
    asked: list[JsonDict | None] = field(default_factory=list)
    """The server request of each turn (None: the turn asked nothing)."""
    around: list[list[JsonDict]] = field(default_factory=list)
    """Each turn's messages from its mcpToolCall item/started to its item/completed."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """call id → the ``function_call_output`` output the model got."""
    warnings: list[str] = field(default_factory=list)
    turns: list[str] = field(default_factory=list)
    """Each turn's final status."""
    thread_id: str = ""
    rollout: str | None = None


def _tool_item(m: JsonDict, kind: str) -> bool:
    return m.get("method") == kind and m["params"]["item"]["type"] == "mcpToolCall"


def run_elicitation(
    make_side: Callable[[str], Side],
    work: Path,
    answers: list[JsonDict | None],
    *,
    policy: str = "on-request",
) -> ElicitationResult:
    """``make_side(url)`` is the server against the model at ``url``; ``answers[K]`` answers
    turn K's request (None: answered with ``{}``, or the turn is expected to ask nothing)."""
    result = ElicitationResult()
    with fake.serve(elicitation_replies(len(answers))) as server:
        side = make_side(server.url)
        add_everything(side)
        with side.start() as client:
            client.initialize()
            started = client.request(
                "thread/start",
                {"cwd": str(work), "sandbox": "danger-full-access", "approvalPolicy": policy},
                timeout=90,
            )
            thread_id = result.thread_id = started["thread"]["id"]
            result.rollout = started["thread"].get("path")
            for k, answer in enumerate(answers, 1):
                client.request(
                    "turn/start",
                    {"threadId": thread_id, "input": [{"type": "text", "text": f"elicit {k}"}]},
                )
                first, seen = client.wait_for(
                    lambda m: (
                        m.get("method") == "mcpServer/elicitation/request"
                        or m.get("method") == "turn/completed"
                    ),
                    timeout=90,
                )
                if first.get("method") == "turn/completed":
                    result.asked.append(None)
                    done, rest = first, []
                else:
                    result.asked.append(first)
                    if answer is ERROR:
                        client.send({"id": first["id"], "error": ERROR})
                    else:
                        client.respond(first["id"], answer or {})
                    done, rest = client.wait_method("turn/completed", timeout=90)
                    rest = [first, *rest]
                turn = [*seen, *rest, done]
                start = next(i for i, m in enumerate(turn) if _tool_item(m, "item/started"))
                end = next(i for i, m in enumerate(turn) if _tool_item(m, "item/completed"))
                result.around.append(turn[start : end + 1])
                result.turns.append(done["params"]["turn"]["status"])
            result.messages, result.methods = list(client.messages), dict(client.sent_methods)
        for request in server.requests:
            for item in request.body.get("input", []):
                if item.get("type") == "function_call_output":
                    result.outputs[item["call_id"]] = item["output"]
    result.warnings = [
        m["params"]["message"] for m in result.messages if m.get("method") == "warning"
    ]
    return result


def output_text(output: Any) -> str:
    """The text of a function_call_output (a string, or content items)."""
    if isinstance(output, str):
        return output
    return json.dumps(output)


_TIMES = {"emittedAtMs", "startedAtMs", "completedAtMs", "durationMs", "startedAt", "completedAt"}


def normalized(messages: list[JsonDict], thread_id: str, work: Path) -> list[JsonDict]:
    """``messages`` with the thread id ``<thread>``, turn ids ``<turn>``, times 0 and the work
    directory ``/WORK`` (what differs between two runs), without the envelope's
    ``emittedAtMs`` (Codex stamps every message with it; mini-codex does not)."""

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if key in _TIMES and isinstance(value, int | float):
            return 0
        if key == "threadId" and value == thread_id:
            return "<thread>"
        if key == "turnId" and isinstance(value, str):
            return "<turn>"
        if isinstance(value, str):
            return value.replace(str(work), "/WORK")
        return value

    result: list[JsonDict] = walk(messages)
    return [{k: v for k, v in m.items() if k != "emittedAtMs"} for m in result]
