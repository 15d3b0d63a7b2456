"""One scripted session against ``server-everything``: resources, a template, a prompt, an
elicitation and two concurrent tool calls of one response. Used by ``test_mcp_everything_more.py``
in process (stdio) and, as a script, inside a loopback-only network namespace next to the
server's streamable-HTTP mode::

    python everything_scenario.py http PORT WORKDIR     # prints one JSON line

The result (``run_scenario``) is plain JSON: the outputs by call id, the begin/end times of the
two concurrent calls, the elicitation requests seen, the prompt, the first request's tools and
the ``rollout verify`` violations.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from mini_codex.config import Config, McpServerConfig
from mini_codex.host import SessionOptions, open_options
from mini_codex.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from mini_codex.protocol import FunctionCall, FunctionCallOutput, ResponseItemLine
from mini_codex.protocol.session_events import SessionEvent, ToolCallBegin, ToolCallEnd
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant, function_call

NS = "mcp__everything"
ARCH = "demo://resource/static/document/architecture.md"
ELICITED = {"name": "Ada Lovelace", "check": True, "integer": 7}


def _ns_call(name: str, arguments: dict[str, Any], call_id: str) -> FunctionCall:
    return FunctionCall(name=name, namespace=NS, arguments=json.dumps(arguments), call_id=call_id)


SCRIPT = [
    ScriptedResponse(
        [
            function_call("list_mcp_resources", {}, "res_all"),
            function_call("list_mcp_resource_templates", {"server": "everything"}, "tpl"),
            function_call("read_mcp_resource", {"server": "everything", "uri": ARCH}, "read"),
            function_call(
                "read_mcp_resource",
                {"server": "everything", "uri": "demo://resource/dynamic/text/1"},
                "read_tpl",
            ),
            function_call(
                "read_mcp_resource",
                {"server": "everything", "uri": "demo://resource/dynamic/blob/1"},
                "read_blob",
            ),
        ]
    ),
    ScriptedResponse(
        [
            _ns_call("trigger_long_running_operation", {"duration": 1, "steps": 2}, "slow_1"),
            _ns_call("trigger_long_running_operation", {"duration": 1, "steps": 2}, "slow_2"),
        ]
    ),
    ScriptedResponse([_ns_call("trigger_elicitation_request", {}, "elicit")]),
    ScriptedResponse([assistant("done")]),
]


async def run_scenario(config: McpServerConfig, work: Path) -> dict[str, Any]:
    cwd, home = work / "work", work / "home"
    cwd.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    model = ScriptedModel(SCRIPT)
    times: dict[str, list[float]] = {}
    asked: list[dict[str, Any]] = []

    def on_event(event: SessionEvent) -> None:
        if isinstance(event, ToolCallBegin | ToolCallEnd):
            times.setdefault(event.call_id, []).append(time.monotonic())

    async def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(
            {
                "server": request.server,
                "message": request.message,
                "required": request.requested_schema.get("required"),
            }
        )
        return ElicitationAnswer("accept", dict(ELICITED))

    options = SessionOptions(
        cwd=cwd,
        home=home,
        client=model,
        config=Config(mcp_servers={"everything": config}),
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        environ=dict(os.environ),
        on_event=on_event,
        elicitation_callback=elicit,
    )
    async with open_options(options) as session:
        assert await session.run_turn("use the everything server") == "done"
        assert session.mcp is not None
        assert session.rollout_path is not None
        prompts = {
            server: [prompt.name for prompt in listed]
            for server, listed in session.mcp.prompts().items()
        }
        prompt = await session.mcp.get_prompt("everything", "args-prompt", {"city": "Paris"})
        rollout_path = session.rollout_path
    rollout = read_rollout(rollout_path)
    outputs = {
        line.payload.call_id: line.payload.output
        for line in rollout.lines
        if isinstance(line, ResponseItemLine) and isinstance(line.payload, FunctionCallOutput)
    }
    calls = [
        line.payload.to_json()
        for line in rollout.lines
        if isinstance(line, ResponseItemLine) and isinstance(line.payload, FunctionCall)
    ]
    verify = check_rollout(rollout.lines, line_numbers=rollout.line_numbers)
    return {
        "outputs": outputs,
        "call_order": [call["call_id"] for call in calls],
        "namespaced": [call.get("namespace") for call in calls],
        "output_order": list(outputs),
        "times": {key: times[key] for key in ("slow_1", "slow_2")},
        "asked": asked,
        "prompts": prompts,
        "prompt": prompt.model_dump(mode="json", by_alias=True, exclude_none=True)["messages"],
        "tools": list(model.prompts[0].tools),
        "violations": [str(found) for found in verify.violations],
    }


def _wait_for_port(port: int, timeout_s: float = 20.0) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


if __name__ == "__main__":
    _, mode, port, workdir = sys.argv
    assert mode == "http"
    _wait_for_port(int(port))
    http = McpServerConfig(url=f"http://127.0.0.1:{port}/mcp", required=True)
    print(json.dumps(anyio.run(run_scenario, http, Path(workdir))))
