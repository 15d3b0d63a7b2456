"""The reference ``@modelcontextprotocol/server-everything`` (npm, pinned in ``package.json``):
over stdio, over streamable HTTP in a loopback-only network namespace, and end to end through a
scripted ``mini-codex exec`` whose model calls ``mcp__everything__echo``.

Skipped with the reason when node or ``node_modules`` is missing (``npm ci`` installs it, and
``.ci/run`` runs it), or, for HTTP, when a network namespace cannot be made (needs root,
``unshare`` and ``ip``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import EVERYTHING_BIN, HERE, everything_available

from mini_codex.config import McpServerConfig
from mini_codex.mcp.results import McpCallOutcome
from mini_codex.mcp.runtime import McpRuntime
from mini_codex.protocol import FunctionCall, FunctionCallOutput, ResponseItemLine
from mini_codex.rollout.reader import read_rollout

_missing = everything_available()
pytestmark = pytest.mark.skipif(_missing is not None, reason=_missing or "")

EVERYTHING_TOOLS = sorted(
    "mcp__everything__" + name.replace("-", "_")  # sanitized as Codex 0.169 does
    for name in (
        "echo",
        "get-annotated-message",
        "get-env",
        "get-resource-links",
        "get-resource-reference",
        "get-structured-content",
        "get-sum",
        "get-tiny-image",
        "gzip-file-as-resource",
        "simulate-research-query",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
        # listed to clients that declare elicitation (mini-codex does, as Codex does)
        "trigger-elicitation-request",
        "trigger-long-running-operation",
        "trigger-url-elicitation",
    )
)


def stdio_config(**options: Any) -> McpServerConfig:
    return McpServerConfig(command="node", args=(str(EVERYTHING_BIN), "stdio"), **options)


@pytest.mark.anyio
async def test_everything_over_stdio_calls_timeouts_and_structured_results() -> None:
    config = stdio_config(required=True, tool_timeout_sec=0.5)
    async with McpRuntime.open({"everything": config}) as runtime:
        await runtime.wait_for_required()
        binding = await runtime.binding_for_step()
        assert sorted(tool.name for tool in binding.tools) == EVERYTHING_TOOLS
        assert binding.namespaces["mcp__everything"].startswith(
            "MCP server everything (Everything Reference Server); tools: echo, "
        )
        assert await binding.call("mcp__everything__echo", {"message": "hi"}) == McpCallOutcome(
            '[{"type":"text","text":"Echo: hi"}]', True
        )
        weather = await binding.call(
            "mcp__everything__get_structured_content", {"location": "New York"}
        )
        assert weather == McpCallOutcome(
            '{"temperature":33,"conditions":"Cloudy","humidity":82}', True
        )
        bad = await binding.call("mcp__everything__echo", {})
        assert bad.success is False
        assert "Input validation error" in bad.text
        started = time.monotonic()
        slow = await binding.call(
            "mcp__everything__trigger_long_running_operation", {"duration": 3, "steps": 3}
        )
        assert slow == McpCallOutcome(
            "MCP server 'everything': tool 'trigger-long-running-operation' timed out after 0.5 s",
            False,
        )
        assert time.monotonic() - started < 2.0
        again = await binding.call("mcp__everything__get_sum", {"a": 2, "b": 40})
        assert again == McpCallOutcome(
            '[{"type":"text","text":"The sum of 2 and 40 is 42."}]', True
        )


def _netns_unavailable() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0:
        return "a loopback-only network namespace needs root on Linux"
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    probe = subprocess.run(
        ["unshare", "-n", "ip", "link", "set", "lo", "up"],
        capture_output=True,
        check=False,
        timeout=10,
    )
    if probe.returncode != 0:
        return f"unshare -n failed: {probe.stderr.decode(errors='replace').strip()}"
    return None


def test_everything_over_streamable_http_in_a_loopback_only_namespace() -> None:
    reason = _netns_unavailable()
    if reason is not None:
        pytest.skip(reason)
    # The server binds every interface, so it runs in a fresh network namespace with only
    # loopback up, together with the client (netns_http_client.py); nothing leaves the box.
    port = 3001
    script = (
        "ip link set lo up; "
        f"PORT={port} node {EVERYTHING_BIN} streamableHttp >/dev/null 2>&1 & NODE=$!; "
        f"{sys.executable} {HERE / 'netns_http_client.py'} {port}; status=$?; "
        "kill $NODE; wait $NODE 2>/dev/null; exit $status"
    )
    process = subprocess.Popen(
        ["unshare", "-n", "sh", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, stderr
    assert json.loads(stdout) == {
        "tools": EVERYTHING_TOOLS,
        "echo": ['[{"type":"text","text":"Echo: over http"}]', True],
        "sum": ['[{"type":"text","text":"The sum of 2 and 40 is 42."}]', True],
    }


def test_exec_calls_mcp_everything_echo_end_to_end(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(
        "# MCP servers for this test\n"
        "[mcp_servers.everything]\n"
        'command = "node"\n'
        f'args = ["{EVERYTHING_BIN}", "stdio"]\n'
        "required = true\n"
    )
    script = tmp_path / "script.jsonl"
    lines = [
        {
            "output": [
                {
                    "type": "function_call",
                    "name": "mcp__everything__echo",
                    "call_id": "call_echo",
                    "arguments": {"message": "hello from exec"},
                }
            ]
        },
        {"output": [{"type": "message", "content": "The server echoed."}], "end_turn": True},
    ]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines))
    trace = tmp_path / "trace.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(home)
    mini_codex = Path(sys.executable).parent / "mini-codex"
    args = [
        "exec",
        "--model",
        f"scripted:{script}",
        "--json-events=mini-codex",
        "--trace-requests",
        str(trace),
    ]
    done = subprocess.run(
        [str(mini_codex), *args, "--cd", str(work), "echo something"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    rollout = read_rollout(Path(events[0]["rollout_path"]))
    items = [
        line.payload
        for line in rollout.lines
        if isinstance(line, ResponseItemLine)
        and isinstance(line.payload, FunctionCall | FunctionCallOutput)
    ]
    assert [item.to_json() for item in items] == [
        {
            "type": "function_call",
            "id": "fc_1_0",
            "name": "mcp__everything__echo",
            "arguments": '{"message":"hello from exec"}',
            "call_id": "call_echo",
        },
        {
            "type": "function_call_output",
            "call_id": "call_echo",
            "output": '[{"type":"text","text":"Echo: hello from exec"}]',
        },
    ]
    first_request = json.loads(trace.read_text().splitlines()[0])
    # The flat name (Chat Completions, older rollouts) still dispatches; the Responses wire
    # advertises the server as one namespace entry.
    namespaces = [tool for tool in first_request["tools"] if tool["type"] == "namespace"]
    assert [entry["name"] for entry in namespaces] == ["mcp__everything"]
    assert "echo" in [tool["name"] for tool in namespaces[0]["tools"]]
    assert (home / "mcp_cache").is_dir()  # the catalog was cached for the next session
