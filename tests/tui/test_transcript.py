"""The transcript: a prompt and its streamed answer, a shell cell, an apply_patch diff, plans,
world-state notes and errors — through the real app and a real Session."""

from __future__ import annotations

import pytest
from textual.widgets import Collapsible, Markdown
from tui_helpers import idle, type_and_send, wait_for

from mini_codex.models.base import TokenUsage
from mini_codex.models.errors import InvalidRequest
from mini_codex.testing import (
    ScriptedFailure,
    ScriptedResponse,
    assistant,
    function_call,
    reasoning,
)
from mini_codex.tui.run import ui_harness

pytestmark = pytest.mark.anyio


async def test_a_prompt_shows_the_user_message_and_the_streamed_answer(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("Hello **there**.")])])
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "say hi")
        await wait_for(pilot, lambda: "Hello **there**." in app.transcript_lines())
        lines = app.transcript_lines()
        assert lines[-2:] == ["› say hi", "Hello **there**."]
        assert len(app.transcript.query(Markdown)) == 1
        await wait_for(pilot, lambda: idle(app))
        assert "working" not in str(app.query_one("#status").content)


async def test_a_shell_cell_shows_command_output_exit_code_and_duration(make_harness) -> None:
    harness = make_harness(
        [
            ScriptedResponse(
                [
                    reasoning("List two words."),
                    function_call("shell", {"command": "printf 'alpha\\nbeta\\n'"}, "c1"),
                ]
            ),
            ScriptedResponse([assistant("done")]),
        ],
        policy="never",
    )
    app = harness.app(prompt="print words")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: "done" in app.transcript_lines())
        cell = next(line for line in app.transcript_lines() if line.startswith("$ "))
        head, output, result = cell.split("\n", 2)[0], cell.split("\n")[1:3], cell.split("\n")[-1]
        assert head == "$ printf 'alpha\\nbeta\\n'"
        assert output == ["alpha", "beta"]
        assert result.startswith("✓ exit 0 · ")
        assert result.endswith("s")
        collapsible = app.transcript.query(Collapsible).first()
        assert collapsible.collapsed is True
        assert "reasoning: List two words." in app.transcript_lines()


async def test_an_apply_patch_call_is_shown_as_a_coloured_diff(make_harness) -> None:
    patch = "*** Begin Patch\n*** Add File: hello.py\n+print('hi')\n*** End Patch"
    harness = make_harness(
        [
            ScriptedResponse([function_call("apply_patch", {"input": patch}, "p1")]),
            ScriptedResponse([assistant("added")]),
        ]
    )
    app = harness.app(prompt="add hello")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: "added" in app.transcript_lines())
        cell = next(
            w
            for w in app.transcript.children
            if str(getattr(w, "content", "")).startswith("✎ apply_patch")
        )
        text = cell.content
        assert str(text).splitlines()[:5] == [
            "✎ apply_patch",
            "*** Begin Patch",
            "*** Add File: hello.py",
            "+print('hi')",
            "*** End Patch",
        ]
        added = [
            span for span in text.spans if text.plain[span.start : span.end] == "+print('hi')\n"
        ]
        assert [span.style for span in added] == ["green"]
        assert (harness.work / "hello.py").read_text() == "print('hi')\n"
        assert "workspace: +hello.py" in app.transcript_lines()


async def test_a_plan_update_is_a_checklist(make_harness) -> None:
    plan = {
        "plan": [
            {"step": "read the code", "status": "completed"},
            {"step": "write the fix", "status": "in_progress"},
            {"step": "run the tests", "status": "pending"},
        ]
    }
    harness = make_harness(
        [
            ScriptedResponse([function_call("update_plan", plan, "u1")]),
            ScriptedResponse([assistant("planned")]),
        ]
    )
    app = harness.app(prompt="plan it")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: "planned" in app.transcript_lines())
        assert "plan\n  ☑ read the code\n  ◐ write the fix\n  ☐ run the tests" in (
            app.transcript_lines()
        )


async def test_a_failed_turn_is_an_error_in_red_with_the_next_step(make_harness) -> None:
    harness = make_harness(
        [ScriptedFailure(InvalidRequest("bad request")), ScriptedResponse([assistant("ok")])]
    )
    app = harness.app(prompt="go")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: any("error" in line for line in app.transcript_lines()))
        await wait_for(pilot, lambda: idle(app))
        error = next(line for line in app.transcript_lines() if line.startswith("✗ error"))
        assert "bad request" in error
        assert error.endswith("→ send another prompt to retry, or /new to start over")
        await type_and_send(pilot, "again")
        await wait_for(pilot, lambda: "ok" in app.transcript_lines())


async def test_the_status_line_shows_token_usage_and_context_left(make_harness) -> None:
    usage = TokenUsage(input_tokens=10_000, output_tokens=2_000, total_tokens=12_000)
    harness = make_harness([ScriptedResponse([assistant("counted")], usage=usage)])
    app = harness.app(prompt="count")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: idle(app) and app.token_info is not None)
        window = app.token_info["model_context_window"]
        left = 100 - round(100 * 12_000 / window)
        assert str(app.query_one("#status").content) == (
            "gpt-5.1-codex · approvals never · workspace-write · "
            f"12,000 tokens · {left}% context left"
        )
