"""The UI against the real ``server-everything`` (stdio): its prompts as ``/mcp__everything__…``
commands (completion, ``name=value`` arguments, refusals), and its elicitation request answered
in the form overlay (a value the schema refuses is shown and the form stays; accept, decline)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList
from tui_helpers import idle, type_and_send, wait_for

from mini_codex.config import McpServerConfig
from mini_codex.protocol import FunctionCall, FunctionCallOutput, ResponseItemLine
from mini_codex.rollout.reader import read_rollout
from mini_codex.testing import ScriptedResponse, assistant
from mini_codex.tui.app import MiniCodexApp
from mini_codex.tui.elicitation import ElicitationScreen
from mini_codex.tui.run import ui_harness

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
EVERYTHING_BIN = REPO / "node_modules" / ".bin" / "mcp-server-everything"
NS = "mcp__everything"


def everything() -> McpServerConfig:
    if shutil.which("node") is None or not EVERYTHING_BIN.exists():
        pytest.skip("node or node_modules is missing (run `npm ci` at the repository root)")
    return McpServerConfig(command="node", args=(str(EVERYTHING_BIN), "stdio"), required=True)


def elicit_call(call_id: str) -> ScriptedResponse:
    call = FunctionCall(
        name="trigger_elicitation_request", namespace=NS, arguments="{}", call_id=call_id
    )
    return ScriptedResponse([call])


def user_texts(app: MiniCodexApp) -> list[str]:
    return [line for line in app.transcript_lines() if line.startswith("›")]


def menu_ids(app: MiniCodexApp) -> list[str]:
    menu = app.query_one("#menu", OptionList)
    return [menu.get_option_at_index(i).id or "" for i in range(menu.option_count)]


async def ready(pilot: Pilot[None], app: MiniCodexApp) -> None:
    await wait_for(pilot, lambda: bool(app.prompt_commands()), limit_s=60)


async def test_prompt_commands_complete_take_arguments_and_send_the_prompt(
    make_harness,
) -> None:
    harness = make_harness([ScriptedResponse([assistant("sunny")])])
    harness.mcp_servers = {"everything": everything()}
    app = harness.app()
    async with ui_harness(app, size=(100, 30)) as pilot:
        await ready(pilot, app)
        await pilot.press(*"/mcp__every")
        await wait_for(pilot, lambda: app.query_one("#menu", OptionList).display)
        assert menu_ids(app) == [
            "mcp__everything__simple-prompt",
            "mcp__everything__args-prompt",
            "mcp__everything__completable-prompt",
            "mcp__everything__resource-prompt",
        ]
        await pilot.press("down", "enter")  # args-prompt takes arguments: completed, not run
        composer = app.query_one("#composer")
        assert composer.text == "/mcp__everything__args-prompt "  # type: ignore[attr-defined]
        await type_and_send(pilot, "state=TX")
        await wait_for(pilot, lambda: "missing required" in app.transcript_lines()[-1])
        assert app.transcript_lines()[-1] == (
            "/mcp__everything__args-prompt: missing required argument(s) city "
            "(give them as name=value)"
        )
        await type_and_send(pilot, "/mcp__everything__args-prompt town=Paris")
        await wait_for(pilot, lambda: "unknown argument" in app.transcript_lines()[-1])
        assert app.transcript_lines()[-1] == (
            "/mcp__everything__args-prompt: unknown argument 'town' (arguments: city, state)"
        )
        await type_and_send(pilot, '/mcp__everything__args-prompt city="New York" state=NY')
        await wait_for(pilot, lambda: "sunny" in app.transcript_lines() and idle(app))
        assert user_texts(app) == ["› What's weather in New York, NY?"]
        sent = harness.model.prompts[0].input[-1].to_json()
        assert sent["role"] == "user"
        assert sent["content"] == [
            {"type": "input_text", "text": "What's weather in New York, NY?"}
        ]
        await type_and_send(pilot, "/mcp__everything__nope")
        await wait_for(pilot, lambda: "unknown MCP prompt" in app.transcript_lines()[-1])


async def fill(pilot: Pilot[None], screen: ElicitationScreen, index: int, text: str) -> None:
    field = screen.query_one(f"#field-{index}", Input)
    field.focus()
    field.value = ""
    await pilot.press(*text)


async def choose(pilot: Pilot[None], screen: ElicitationScreen, action: str) -> None:
    actions = screen.query_one(OptionList)
    actions.focus()
    actions.highlighted = ["accept", "decline", "cancel"].index(action)
    await pilot.press("enter")


async def test_elicitation_overlay_validates_accepts_and_declines(make_harness) -> None:
    harness = make_harness(
        [
            elicit_call("e1"),
            elicit_call("e2"),
            elicit_call("e3"),
            ScriptedResponse([assistant("ok")]),
        ]
    )
    harness.mcp_servers = {"everything": everything()}
    app = harness.app(prompt="ask me")
    async with ui_harness(app, size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitationScreen), limit_s=60)
        screen = app.screen
        assert isinstance(screen, ElicitationScreen)
        assert screen.fields[:2] == ["name", "check"]
        # Enter moves from field to field; the first field has the focus.
        # (The form is pushed before its fields are composed: wait for them too.)
        await wait_for(
            pilot,
            lambda: (
                bool(screen.query("#field-0"))
                and screen.focused is screen.query_one("#field-0", Input)
            ),
        )
        await pilot.press(*"Ada Lovelace", "enter")
        assert screen.focused is screen.query_one("#field-1", Input)
        await pilot.press(*"yes")
        await fill(pilot, screen, screen.fields.index("integer"), "500")
        await fill(pilot, screen, screen.fields.index("titledSingleSelectEnum"), "wonder woman")
        await fill(pilot, screen, screen.fields.index("legacyTitledEnum"), "Dogs")
        await choose(pilot, screen, "accept")
        error = screen.query_one("#elicitation-error")
        assert (
            str(error.render()) == "not accepted: integer: 500 is greater than the maximum of 100"
        )
        assert app.screen is screen  # still open
        assert screen.focused is screen.query_one(f"#field-{screen.fields.index('integer')}")
        await fill(pilot, screen, screen.fields.index("integer"), "7")
        await choose(pilot, screen, "accept")
        # The second request: declined; the third: cancelled with Esc.
        await wait_for(
            pilot, lambda: isinstance(app.screen, ElicitationScreen) and app.screen is not screen
        )
        second = app.screen
        await choose(pilot, second, "decline")  # type: ignore[arg-type]
        # The third form is neither of the first two (the second may still be up for a moment).
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ElicitationScreen)
                and app.screen is not screen
                and app.screen is not second
            ),
        )
        third = app.screen
        # As the first: the form is pushed before its fields are composed (an Esc before then
        # was lost, and the turn waited for an answer).
        await wait_for(pilot, lambda: bool(third.query("#field-0")) and third.focused is not None)
        await pilot.press("escape")
        # The turn ends after three MCP round trips: as long as the first form (loaded machine).
        await wait_for(pilot, lambda: "ok" in app.transcript_lines() and idle(app), limit_s=60)
        assert third is not app.screen
        notes = [
            line for line in app.transcript_lines() if line.startswith("MCP server everything")
        ]
        assert notes == [
            "MCP server everything: elicitation accept",
            "MCP server everything: elicitation decline",
            "MCP server everything: elicitation cancel",
        ]
        session = harness.sessions[0]
        assert session.rollout_path is not None
        rollout_path = session.rollout_path
    outputs = {
        line.payload.call_id: line.payload.output
        for line in read_rollout(rollout_path).lines
        if isinstance(line, ResponseItemLine) and isinstance(line.payload, FunctionCallOutput)
    }

    def raw(call_id: str) -> object:
        """The ``Raw result: {...}`` (what the server received) the everything server returns."""
        parts = json.loads(str(outputs[call_id]))
        return json.loads(parts[-1]["text"].split("Raw result: ", 1)[1])

    assert raw("e1") == {
        "action": "accept",
        "content": {
            "name": "Ada Lovelace",
            "check": True,
            "integer": 7,
            "titledSingleSelectEnum": "hero-3",
            "legacyTitledEnum": "pet-2",
        },
    }
    assert raw("e2") == {"action": "decline"}
    assert raw("e3") == {"action": "cancel"}
