"""Every slash command, typed in the composer of the running app, and the completion menu."""

from __future__ import annotations

import json
import subprocess

import anyio
import pytest
from textual.widgets import OptionList
from tui_helpers import type_and_send, wait_for

from mini_codex.testing import ScriptedResponse, assistant
from mini_codex.tui.composer import Composer
from mini_codex.tui.run import ui_harness
from mini_codex.tui.screens import ResumePicker
from mini_codex.tui.slash import AGENTS_MD_SKELETON, COMMANDS

pytestmark = pytest.mark.anyio


async def run_command(make_harness, command: str, script=None):
    harness = make_harness(script or [ScriptedResponse([assistant("hi")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        before = len(app.transcript_lines())
        await type_and_send(pilot, command)
        await wait_for(pilot, lambda: len(app.transcript_lines()) > before)
        await pilot.pause(0.1)
        return harness, app, app.transcript_lines()[before:]


async def test_status_shows_model_policies_session_and_rollout(make_harness) -> None:
    harness, _app, lines = await run_command(make_harness, "/status")
    session = harness.sessions[0]
    assert lines == [
        "status\n"
        "  model           gpt-5.1-codex\n"
        "  provider        openai\n"
        f"  cwd             {harness.work}\n"
        "  sandbox         workspace-write\n"
        "  approval policy never\n"
        f"  session id      {session.session_id}\n"
        f"  rollout         {session.rollout_path}\n"
        "  tokens          none used yet"
    ]


async def test_model_and_approvals_change_the_next_turns(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("hi")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/model gpt-test")
        await type_and_send(pilot, "/approvals on-request")
        await type_and_send(pilot, "/approvals sometimes")
        await pilot.pause(0.1)
        session = harness.sessions[0]
        assert (session.model, session.approval_policy) == ("gpt-test", "on-request")
        assert app.transcript_lines()[-3:] == [
            "model set to gpt-test from the next turn",
            "approval policy set to on-request",
            "approval policy: on-request (/approvals one of: untrusted, on-failure, "
            "on-request, never)",
        ]
        assert str(app.query_one("#status").content).startswith("gpt-test · approvals on-request")
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: "hi" in app.transcript_lines())
    assert harness.model.prompts[0].model == "gpt-test"


async def test_compact_summarizes_the_conversation(make_harness) -> None:
    script = [ScriptedResponse([assistant("hi")]), ScriptedResponse([assistant("we said hi")])]
    harness = make_harness(script)
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: "hi" in app.transcript_lines())
        await type_and_send(pilot, "/compact")
        await wait_for(pilot, lambda: "conversation compacted" in app.transcript_lines())
        lines = app.transcript_lines()
        assert sorted(lines[lines.index("compacting the conversation…") + 1 :]) == [
            "Heads up: long threads and repeated compactions can make the model less accurate. "
            "Start a new thread when you can, to keep threads small and focused.",
            "conversation compacted",
        ]
    rollout = (await anyio.Path(harness.sessions[0].rollout_path).read_text()).splitlines()
    compacted = [json.loads(line)["payload"] for line in rollout if '"compacted"' in line]
    assert [entry["message"].rsplit("\n", 1)[-1] for entry in compacted] == ["we said hi"]


@pytest.fixture
def git_work(tmp_path):
    """A git workspace with one changed tracked file and one untracked file."""
    work = tmp_path / "work"
    work.mkdir()
    git = ["git", "-C", str(work), "-c", "user.email=t@e", "-c", "user.name=t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (work / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    (work / "a.txt").write_text("two\n")
    (work / "new.txt").write_text("fresh\n")
    return work


async def test_diff_shows_tracked_changes_and_untracked_files(make_harness, git_work) -> None:
    _harness, _app, lines = await run_command(make_harness, "/diff")
    diff = lines[0].splitlines()
    assert "-one" in diff
    assert "+two" in diff
    assert "+++ b/new.txt" in diff
    assert "+fresh" in diff


async def test_new_opens_a_fresh_session(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("hi")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        first = app.session
        await type_and_send(pilot, "/new")
        await wait_for(pilot, lambda: app.session is not None and app.session is not first)
        assert len(harness.sessions) == 2
        assert harness.sessions[0].session_id != harness.sessions[1].session_id


async def test_resume_opens_the_picker(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("hi")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/resume")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ResumePicker) and bool(app.screen.query(OptionList)),
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(harness.sessions) == 2 and app.session is not None)


async def test_init_writes_an_agents_md_skeleton_once(make_harness) -> None:
    harness, _app, lines = await run_command(make_harness, "/init")
    path = harness.work / "AGENTS.md"
    assert path.read_text() == AGENTS_MD_SKELETON
    assert lines == [f"wrote {path} (a skeleton: fill in the sections)"]
    _h, _app, again = await run_command(make_harness, "/init")
    assert again == [f"{path} already exists; left unchanged"]


async def test_mcp_without_servers(make_harness) -> None:
    _harness, _app, lines = await run_command(make_harness, "/mcp")
    assert lines == ["no MCP servers configured ([mcp_servers.NAME] in config.toml)"]


async def test_quit_exits_and_closes_the_session(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("hi")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/quit")
        await pilot.pause(0.2)
        assert app._exit is True  # the app is leaving
    assert harness.sessions[0].recorder is not None


async def test_unknown_command(make_harness) -> None:
    _harness, _app, lines = await run_command(make_harness, "/frobnicate")
    assert lines == ["unknown command /frobnicate (type / to see the list)"]


async def test_the_completion_menu_lists_commands_and_completes_one(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("hi")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press("/")
        menu = app.query_one("#menu", OptionList)
        await wait_for(pilot, lambda: menu.display is True)
        assert [menu.get_option_at_index(i).id for i in range(menu.option_count)] == [
            c.name for c in COMMANDS
        ]
        await pilot.press("s", "t")
        await wait_for(pilot, lambda: menu.option_count == 1)
        await pilot.press("tab")
        assert app.query_one(Composer).text == "/status "
        assert menu.display is False
