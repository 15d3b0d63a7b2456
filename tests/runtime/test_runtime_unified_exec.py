"""Unified exec inside a real Session: ``tools.unified_exec`` picks ``exec_command`` +
``write_stdin`` over ``shell``, and closing the session kills every live PTY session."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_harness import open_session

from mini_codex.config import Config, load_config
from mini_codex.host.assemble import uses_unified_exec
from mini_codex.models.base import ModelClientOptions
from mini_codex.models.openai_responses import OpenAIResponsesClient
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.protocol.session_events import ToolCallEnd
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant, function_call
from process_groups import group_alive, group_gone

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def tool_names(tools: tuple[dict[str, object], ...]) -> list[object]:
    return [tool.get("name") for tool in tools]


async def test_the_session_kills_live_pty_sessions_when_it_closes(tmp_path: Path) -> None:
    config = load_config(None, ["tools.unified_exec=true"])
    command = "echo $$; sleep 60 & sleep 60"
    script = [
        ScriptedResponse([function_call("exec_command", {"cmd": command, "yield_time_ms": 3000})]),
        ScriptedResponse([assistant("left it running")]),
    ]
    sandbox = SandboxPolicy.danger_full_access()
    async with open_session(tmp_path, script, config=config, sandbox=sandbox) as run:
        assert await run.session.run_turn("start a sleeper") == "left it running"
        assert tool_names(run.prompts[0].tools)[:2] == ["exec_command", "write_stdin"]
        assert "shell" not in tool_names(run.prompts[0].tools)
        (end,) = run.events_of(ToolCallEnd)
        assert end.details is not None
        assert end.details["session_id"] == 1
        pgid = int(end.details["output"].split()[0])
        assert group_alive(pgid)
    assert await group_gone(pgid)


async def test_the_default_picks_unified_exec_for_the_responses_provider_only() -> None:
    scripted = ScriptedModel([])
    responses = OpenAIResponsesClient.from_options(
        ModelClientOptions(model="gpt-5.1-codex", api_key="test-key")
    )
    try:
        on = load_config(None, ["tools.unified_exec=true"])
        off = load_config(None, ["tools.unified_exec=false"])
        assert [
            uses_unified_exec(Config(), scripted),
            uses_unified_exec(Config(), responses),
            uses_unified_exec(on, scripted),
            uses_unified_exec(off, responses),
        ] == [False, True, True, False]
    finally:
        await responses.aclose()


async def test_scripted_sessions_keep_the_shell_tool(tmp_path: Path) -> None:
    async with open_session(tmp_path, [ScriptedResponse([assistant("hi")])]) as run:
        await run.session.run_turn("hello")
        names = tool_names(run.prompts[0].tools)
        assert "shell" in names
        assert "exec_command" not in names
