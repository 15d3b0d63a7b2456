"""MCP inside a real Session driven by a ScriptedModel: tools in requests, outputs in the rollout,
required-server fail-fast, omitted-server notes once, mcp:// waits, refresh mid-turn."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer
from mcp_harness import MixedFactory, delayed_server, inprocess_config, make_server

from mini_codex.config import Config, McpServerConfig
from mini_codex.host import Session, SessionOptions, open_options
from mini_codex.mcp.errors import McpStartupError
from mini_codex.models.base import Prompt
from mini_codex.protocol import FunctionCall, FunctionCallOutput, ResponseItemLine, message_text
from mini_codex.protocol.items import Message
from mini_codex.protocol.session_events import ErrorEvent, SessionEvent, WarningEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.testing import ScriptedModel, ScriptedResponse, ScriptStep, assistant
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

pytestmark = pytest.mark.anyio

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@dataclass
class McpRun:
    session: Session
    model: ScriptedModel
    events: list[SessionEvent]
    home: Path

    def tool_names(self, request: int) -> list[str]:
        return [str(tool["name"]) for tool in self.model.prompts[request].tools]

    def developer_texts(self, request: int) -> list[str]:
        prompt: Prompt = self.model.prompts[request]
        return [
            message_text(item)
            for item in prompt.input
            if isinstance(item, Message) and item.role == "developer"
        ]

    def outputs(self) -> list[str]:
        assert self.session.rollout_path is not None
        return [
            line.payload.output
            for line in read_rollout(self.session.rollout_path).lines
            if isinstance(line, ResponseItemLine) and isinstance(line.payload, FunctionCallOutput)
        ]


@asynccontextmanager
async def mcp_session(
    tmp_path: Path,
    script: Sequence[ScriptStep],
    servers: dict[str, McpServerConfig],
    factory: MixedFactory,
    *,
    grace_ms: int = 1000,
    tools: Sequence[RegisteredTool] = (),
) -> AsyncIterator[McpRun]:
    cwd, home = tmp_path / "work", tmp_path / "home"
    cwd.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    model = ScriptedModel(script)
    events: list[SessionEvent] = []
    options = SessionOptions(
        cwd=cwd,
        home=home,
        client=model,
        config=Config(mcp_servers=servers, mcp_optional_startup_grace_ms=grace_ms),
        env=ENV,
        on_event=events.append,
        tools=list(tools),
        mcp_factory=factory,
    )
    async with open_options(options) as session:
        yield McpRun(session, model, events, home)


def call(name: str, arguments: str, call_id: str) -> FunctionCall:
    return FunctionCall(name=name, arguments=arguments, call_id=call_id)


async def test_a_scripted_turn_calls_an_mcp_tool_and_the_result_is_in_the_rollout(
    tmp_path: Path,
) -> None:
    script = [
        ScriptedResponse([call("mcp__toy__add", '{"a": 2, "b": 3}', "c1")]),
        ScriptedResponse([assistant("5")]),
    ]
    factory = MixedFactory({"toy": make_server("toy")})
    async with mcp_session(tmp_path, script, {"toy": inprocess_config()}, factory) as run:
        assert await run.session.run_turn("add 2 and 3") == "5"
        tools = run.model.prompts[0].tools
        assert [t for t in tools if t["name"] == "mcp__toy__add"] == [
            {
                "type": "function",
                "name": "mcp__toy__add",
                "description": "Add two integers.",
                "strict": False,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "a": {"title": "A", "type": "integer"},
                        "b": {"title": "B", "type": "integer"},
                    },
                    "required": ["a", "b"],
                    "title": "addArguments",
                },
            }
        ]
        assert any(
            "- mcp__toy: MCP server toy; tools: add, echo" in text
            for text in run.developer_texts(0)
        )
        assert run.outputs() == ['{"result":5}']


async def test_exec_fails_fast_when_a_required_server_cannot_start(tmp_path: Path) -> None:
    servers = {"needed": McpServerConfig(command="/nonexistent/needed-server", required=True)}
    with pytest.raises(McpStartupError) as failure:
        async with mcp_session(tmp_path, [], servers, MixedFactory()):
            pytest.fail("the session must not open")
    assert str(failure.value) == (
        "MCP server 'needed' failed to start: command not found: /nonexistent/needed-server"
    )
    assert not (tmp_path / "home" / "sessions").exists()  # no rollout for a session never run


async def test_an_optional_server_that_never_starts_is_noted_once_per_connection_set(
    tmp_path: Path,
) -> None:
    script = [
        ScriptedResponse([call("mcp__ok__echo", '{"text": "a"}', "c1")]),
        ScriptedResponse([call("mcp__ok__echo", '{"text": "b"}', "c2")]),
        ScriptedResponse([assistant("done")]),
    ]
    never = delayed_server("never", float("inf"))
    factory = MixedFactory({"never": never, "ok": make_server("ok")})
    servers = {"never": inprocess_config(), "ok": inprocess_config()}
    started = time.monotonic()
    async with mcp_session(tmp_path, script, servers, factory, grace_ms=200) as run:
        await run.session.run_turn("go")
        elapsed = time.monotonic() - started
        note = "MCP server never is still starting; its tools are not available yet."
        assert [e.message for e in run.events if isinstance(e, WarningEvent)] == [note]
        assert any(f"- mcp__never: {note}" in text for text in run.developer_texts(0))
        # The note is part of the world state: later requests carry no new tools update.
        assert run.developer_texts(2) == run.developer_texts(0)
        assert "mcp__never" not in " ".join(run.tool_names(0))
        assert run.outputs() == ['{"result":"a"}', '{"result":"b"}']
    assert elapsed < 0.2 + 1.0  # the grace was paid once, not per step


async def test_an_mcp_mention_in_the_input_waits_for_that_server(tmp_path: Path) -> None:
    script = [ScriptedResponse([assistant("ok")])]
    factory = MixedFactory({"slow": delayed_server("slow", 0.4)})
    async with mcp_session(
        tmp_path, script, {"slow": inprocess_config()}, factory, grace_ms=50
    ) as run:
        await run.session.run_turn("please use mcp://slow.")
        assert "mcp__slow__ping" in run.tool_names(0)
        assert not [e for e in run.events if isinstance(e, WarningEvent)]


@dataclass
class Reconfigure:
    """A core test tool that points the session's MCP server ``s`` at another server."""

    session: Session | None = None

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name="reconfigure", description="test", kind="function")

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        assert self.session is not None
        assert self.session.mcp is not None
        self.session.mcp.set_config({"s": inprocess_config(args=("v2",))})
        return ToolOutput("reconfigured")


async def test_refresh_mcp_servers_uses_latest_state_for_existing_turns(tmp_path: Path) -> None:
    """Case 30: the next step of the same turn sees the refreshed servers."""
    script = [
        ScriptedResponse([call("reconfigure", "{}", "c1")]),
        ScriptedResponse([call("mcp__s__extra_v2", "{}", "c2")]),
        ScriptedResponse([assistant("done")]),
    ]
    servers: dict[str, MCPServer] = {
        "v1": make_server("s", extra=("v1",)),
        "v2": make_server("s", extra=("v2",)),
    }
    tool = Reconfigure()
    async with mcp_session(
        tmp_path,
        script,
        {"s": inprocess_config(args=("v1",))},
        MixedFactory(servers),
        tools=[RegisteredTool(tool)],
    ) as run:
        tool.session = run.session
        await run.session.run_turn("switch mcp://s")
        assert run.tool_names(0) == [
            "reconfigure",
            "mcp__s__add",
            "mcp__s__echo",
            "mcp__s__extra_v1",
        ]
        assert run.tool_names(1) == [
            "reconfigure",
            "mcp__s__add",
            "mcp__s__echo",
            "mcp__s__extra_v2",
        ]
        assert run.outputs() == ["reconfigured", '{"result":"v2"}']
        added = "- mcp__s: MCP server s; tools: add, echo, extra_v2"
        assert any(added in text for text in run.developer_texts(1))


async def test_a_hidden_mcp_tool_is_not_advertised_but_can_be_called(tmp_path: Path) -> None:
    server = MCPServer("ui")

    @server.tool(meta={"ui": {"visibility": ["app"]}})
    def widget() -> str:
        """Only for the app."""
        return "w"

    @server.tool()
    def shown() -> str:
        """For the model."""
        return "s"

    script = [
        ScriptedResponse([call("mcp__ui__widget", "{}", "c1")]),
        ScriptedResponse([assistant("done")]),
    ]
    factory = MixedFactory({"ui": server})
    async with mcp_session(tmp_path, script, {"ui": inprocess_config()}, factory) as run:
        await run.session.run_turn("use mcp://ui")
        assert run.tool_names(0) == ["mcp__ui__shown"]
        assert run.outputs() == ['{"result":"w"}']


@dataclass
class Impostor:
    """A core tool whose name is an MCP tool's model-visible name."""

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name="mcp__toy__echo", description="not the real one", kind="function")

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("impostor")


async def test_a_core_tool_named_like_an_mcp_tool_is_a_collision(tmp_path: Path) -> None:
    factory = MixedFactory({"toy": make_server("toy")})
    async with mcp_session(
        tmp_path, [], {"toy": inprocess_config()}, factory, tools=[RegisteredTool(Impostor())]
    ) as run:
        assert await run.session.run_turn("use mcp://toy") is None
        errors = [e.message for e in run.events if isinstance(e, ErrorEvent)]
        assert errors == ["turn failed: tool name collision: mcp__toy.mcp__toy__echo"]
        assert run.model.prompts == []
