"""The app-server scenario of the issue, driven the same way against ours and the real Codex.

``Side`` says how to start one server (argv + environment) against the local test model server;
``run_flow`` runs initialize → thread/start → a command turn → an ``untrusted`` thread whose
command is declined → ``turn/interrupt`` during ``sleep 30`` → thread/list and thread/read → a new
server process resumes the first thread, and returns what it saw (every message of both processes,
for the schema check, plus the facts the tests assert). The model replies are the same for both
sides (``exec_command`` calls, which both use for these models).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).parents[2]
sys.path[:0] = [str(REPO / "tests" / "models"), str(Path(__file__).parent)]

import fake_openai_server as fake  # noqa: E402
from app_server_client import AppServerClient  # noqa: E402

JsonDict = dict[str, Any]
CODEX = REPO / "node_modules" / ".bin" / "codex"
MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
MARKER = "app-server-flow-marker"


def call(n: int, cmd: str) -> JsonDict:
    arguments = json.dumps({"cmd": cmd, "yield_time_ms": 30000})
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
            "name": "exec_command", "arguments": arguments}  # fmt: skip


def message(text: str, n: int = 1) -> JsonDict:
    return {"type": "message", "id": f"msg_{n}", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


def reply(output: list[JsonDict], n: int) -> fake.Reply:
    events = fake.responses_events(output, response_id=f"r{n}", usage=fake.usage(100, 5))
    return fake.sse_reply(events)


REASONING = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text",
             "text": "Write the file first"}]}  # fmt: skip


def flow_replies() -> list[fake.Reply]:
    return [
        reply([REASONING, call(1, "echo hi > out.txt && echo done")], 1),
        reply([message("Wrote out.txt.")], 2),
        reply([call(2, "touch declined.txt")], 3),
        reply([message("Not run, as you said.")], 4),
        reply([call(3, f"sleep 30; echo {MARKER}")], 5),
        reply([message("Resumed with the history.")], 6),
    ]


def provider_config(url: str) -> str:
    return (
        f'model = "gpt-5.5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{url}"\nwire_api = "responses"\nrequest_max_retries = 0\n'
        "stream_max_retries = 0\n"
    )


@dataclass(frozen=True)
class Side:
    name: str
    argv: list[str]
    env: dict[str, str]

    def start(self) -> AppServerClient:
        return AppServerClient(self.argv, env=self.env)


def mini_side(home: Path, url: str) -> Side:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(provider_config(url))
    env = {**os.environ, "MINI_CODEX_HOME": str(home), "CODEX_HOME": str(home / "no-codex")}
    return Side("mini-codex", [MINI_CODEX, "app-server"], env)


def codex_side(home: Path, url: str) -> Side:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(provider_config(url))
    # HOME is a fresh folder: Codex runs commands in a login shell (``bash -lc``), which would
    # source the machine's profile (pyenv's rehash takes a lock that a killed shell leaves).
    user_home = home / "user-home"
    user_home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "CODEX_HOME": str(home),
        "CODEX_API_KEY": "test",
        "HOME": str(user_home),
    }
    return Side("codex", [str(CODEX), "app-server"], env)


def codex_available() -> bool:
    return CODEX.exists() and shutil.which("node") is not None


@dataclass
class FlowResult:
    messages: list[JsonDict] = field(default_factory=list)
    methods: dict[int, dict[Any, str]] = field(default_factory=dict)
    runs: list[tuple[list[JsonDict], dict[Any, str]]] = field(default_factory=list)
    first_turn: list[JsonDict] = field(default_factory=list)
    declined_turn: list[JsonDict] = field(default_factory=list)
    approval: JsonDict = field(default_factory=dict)
    interrupted: JsonDict = field(default_factory=dict)
    listed: JsonDict = field(default_factory=dict)
    read: JsonDict = field(default_factory=dict)
    resumed: JsonDict = field(default_factory=dict)
    resumed_turn: list[JsonDict] = field(default_factory=list)
    exit_codes: list[int] = field(default_factory=list)
    thread_ids: list[str] = field(default_factory=list)
    sleep_was_running: bool = False


def _until_turn_completed(client: AppServerClient, thread_id: str) -> list[JsonDict]:
    done, seen = client.wait_for(
        lambda m: m.get("method") == "turn/completed" and m["params"]["threadId"] == thread_id,
        timeout=60,
    )
    return [*seen, done]


def run_flow(side: Side, work: Path, on_step: Callable[[str], None] = lambda _: None) -> FlowResult:
    result = FlowResult()
    client = side.start()
    try:
        client.initialize()
        first = client.request(
            "thread/start",
            {"cwd": str(work), "sandbox": "danger-full-access", "approvalPolicy": "never"},
        )
        thread_id = first["thread"]["id"]
        result.thread_ids.append(thread_id)
        client.request(
            "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "write it"}]}
        )
        result.first_turn = _until_turn_completed(client, thread_id)
        on_step("command turn")

        second = client.request(
            "thread/start",
            {"cwd": str(work), "sandbox": "workspace-write", "approvalPolicy": "untrusted"},
        )
        second_id = second["thread"]["id"]
        result.thread_ids.append(second_id)
        client.request(
            "turn/start", {"threadId": second_id, "input": [{"type": "text", "text": "touch"}]}
        )
        ask, before = client.wait_for(lambda m: "method" in m and "id" in m, timeout=60)
        result.approval = ask
        client.respond(ask["id"], {"decision": "decline"})
        result.declined_turn = [*before, ask, *_until_turn_completed(client, second_id)]
        on_step("declined")

        turn = client.request(
            "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "sleep"}]}
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
                result.sleep_was_running = True
                break
            time.sleep(0.1)
        client.request("turn/interrupt", {"threadId": thread_id, "turnId": turn["turn"]["id"]})
        result.interrupted = _until_turn_completed(client, thread_id)[-1]
        on_step("interrupted")

        result.listed = client.request("thread/list", {"limit": 10})
        result.read = client.request("thread/read", {"threadId": thread_id, "includeTurns": True})
    finally:
        result.exit_codes.append(client.close())
        result.runs.append((list(client.messages), dict(client.sent_methods)))

    client = side.start()
    try:
        client.initialize()
        result.resumed = client.request("thread/resume", {"threadId": thread_id})
        client.request(
            "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "again"}]}
        )
        result.resumed_turn = _until_turn_completed(client, thread_id)
    finally:
        result.exit_codes.append(client.close())
        result.runs.append((list(client.messages), dict(client.sent_methods)))
    return result


def marker_processes() -> list[int]:
    """Live processes whose command line carries the flow's marker (the ``sleep 30`` shell)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if MARKER.encode() in cmdline.read_bytes():
                stat = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()
                if stat[0] != "Z":
                    found.append(int(cmdline.parent.name))
        except (OSError, IndexError):
            continue
    return found
