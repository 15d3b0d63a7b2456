"""server-everything beyond tools: the resource tools, a resource template, a prompt, an
elicitation answered through the session's callback, two concurrent calls of one response, and
the Responses-wire layout compared with what Codex 0.169 sent (``tests/fixtures/codex_mcp``).
The same scenario (``everything_scenario.py``) runs over stdio here and over streamable HTTP in
a loopback-only network namespace.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from everything_scenario import ARCH, ELICITED, run_scenario
from mcp_harness import EVERYTHING_BIN, HERE, everything_available
from test_mcp_everything import _netns_unavailable, stdio_config

from mini_codex.config import McpServerConfig

_missing = everything_available()
pytestmark = pytest.mark.skipif(_missing is not None, reason=_missing or "")

FIXTURE = HERE.parent / "fixtures" / "codex_mcp" / "codex-0.169.0-everything-requests.json"
RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")


def _codex_requests() -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = json.loads(FIXTURE.read_text())
    return requests


def _codex_output(call_id: str) -> Any:
    for item in _codex_requests()[2]["input"]:
        if item.get("type") == "function_call_output" and item["call_id"] == call_id:
            return item["output"]
    raise AssertionError(f"no output {call_id} in the fixture")


def _without_descriptions(schema: Any) -> Any:
    """A schema with its prose left out (we write our own descriptions; the shape must match)."""
    if isinstance(schema, dict):
        return {k: _without_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_without_descriptions(v) for v in schema]
    return schema


def _codex_namespace() -> dict[str, Any]:
    for item in _codex_requests()[1]["input"]:
        if item.get("type") == "tool_search_output":
            for tool in item["tools"]:
                if tool["name"] == "mcp__everything":
                    return dict(tool)
    raise AssertionError("no mcp__everything namespace in the fixture")


def check_layout(tools: list[dict[str, Any]]) -> None:
    """Our first request against the fixture: the namespace entry and the resource tools."""
    codex_ns = _codex_namespace()
    [ours] = [tool for tool in tools if tool["type"] == "namespace"]
    # Codex 0.169 defers MCP tools behind tool_search (``defer_loading``); we send them at once.
    codex_members = {
        tool["name"]: {k: v for k, v in tool.items() if k != "defer_loading"}
        for tool in codex_ns["tools"]
    }
    assert {k: v for k, v in ours.items() if k != "tools"} == {
        k: v for k, v in codex_ns.items() if k != "tools"
    }
    assert {tool["name"]: tool for tool in ours["tools"]} == codex_members
    codex_first = {t.get("name"): t for t in _codex_requests()[0]["tools"]}
    mine = {t.get("name"): t for t in tools}
    for name in RESOURCE_TOOLS:
        assert _without_descriptions(mine[name]) == _without_descriptions(codex_first[name])


def check_result(result: dict[str, Any]) -> None:
    outputs = result["outputs"]
    # Resource listings and reads: the shapes Codex 0.169 returned for the same calls.
    assert json.loads(outputs["res_all"]) == json.loads(_codex_output("call_2"))
    assert json.loads(outputs["tpl"]) == json.loads(_codex_output("call_3"))
    assert json.loads(outputs["read"]) == json.loads(_codex_output("call_4"))
    template = json.loads(outputs["read_tpl"])
    assert template["server"] == "everything"
    [text] = template["contents"]
    assert text["uri"] == "demo://resource/dynamic/text/1"
    assert text["text"].startswith("Resource 1: This is a plaintext resource")
    blob = json.loads(outputs["read_blob"])
    codex_blob = json.loads(_codex_output("call_5"))
    assert {k: v for k, v in blob["contents"][0].items() if k != "blob"} == {
        k: v for k, v in codex_blob["contents"][0].items() if k != "blob"
    }
    decoded = base64.b64decode(blob["contents"][0]["blob"]).decode()
    assert decoded.startswith("Resource 1: This is a base64 blob")
    # The two calls of one response overlapped, and their outputs are in call order.
    (begin_1, end_1), (begin_2, end_2) = result["times"]["slow_1"], result["times"]["slow_2"]
    assert max(begin_1, begin_2) < min(end_1, end_2)
    assert result["output_order"] == result["call_order"]
    assert result["namespaced"] == [None] * 5 + ["mcp__everything"] * 3
    # The elicitation was asked once and the server received the answer.
    assert result["asked"] == [
        {
            "server": "everything",
            "message": "Please provide inputs for the following fields:",
            "required": ["name"],
        }
    ]
    elicited = json.loads(outputs["elicit"])
    assert elicited[0] == {"type": "text", "text": "✅ User provided the requested information!"}
    raw = elicited[-1]["text"].split("Raw result: ", 1)[1]
    assert json.loads(raw) == {"action": "accept", "content": ELICITED}
    # Prompts are listed per server and can be fetched.
    assert result["prompts"] == {
        "everything": ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"]
    }
    assert result["prompt"] == [
        {"role": "user", "content": {"type": "text", "text": "What's weather in Paris?"}}
    ]
    assert result["violations"] == []


@pytest.mark.anyio
async def test_everything_over_stdio_resources_prompt_elicitation_parallel(
    tmp_path: Path,
) -> None:
    result = await run_scenario(stdio_config(required=True), tmp_path)
    check_layout(result["tools"])
    check_result(result)


def test_everything_over_streamable_http_resources_prompt_elicitation_parallel(
    tmp_path: Path,
) -> None:
    reason = _netns_unavailable()
    if reason is not None:
        pytest.skip(reason)
    port = 3001
    script = (
        "ip link set lo up; "
        f"PORT={port} node {EVERYTHING_BIN} streamableHttp >/dev/null 2>&1 & NODE=$!; "
        f"{sys.executable} {HERE / 'everything_scenario.py'} http {port} {tmp_path}; "
        "status=$?; kill $NODE; wait $NODE 2>/dev/null; exit $status"
    )
    process = subprocess.Popen(
        ["unshare", "-n", "sh", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )
    try:
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, stderr
    result = json.loads(stdout.splitlines()[-1])
    check_layout(result["tools"])
    check_result(result)


def test_the_config_keys_codex_uses_for_http() -> None:
    config = McpServerConfig(
        url="http://127.0.0.1:1/mcp",
        bearer_token_env_var="TOKEN",
        http_headers={"X-Static": "1"},
        env_http_headers={"X-From-Env": "HEADER_VALUE"},
    )
    assert config.transport == "streamable_http"
    assert config.env_http_headers == {"X-From-Env": "HEADER_VALUE"}
    assert ARCH.startswith("demo://")
