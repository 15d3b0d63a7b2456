"""Resuming a session continues from its rollout with the same world-state baseline
(DESIGN §6, I3, I5; spec/codex-runtime.md §10 case 3): no second copy of the initial context, no
new full ``world_state``, only what really changed while the session was closed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_harness import Run, describe_rollout, layout, open_session

from mini_codex.config import load_config
from mini_codex.protocol import InputText, Message, ResponseItem, user_message
from mini_codex.protocol.session_events import SessionConfigured
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.testing import ScriptedResponse, assistant, function_call

pytestmark = pytest.mark.anyio

PLAN = {"plan": [{"step": "write tests", "status": "in_progress"}]}
PATCH = "*** Begin Patch\n*** Add File: src/app.py\n+print('hi')\n*** End Patch\n"


async def first_session(tmp_path: Path) -> tuple[Run, list[ResponseItem], Path]:
    script = [
        ScriptedResponse([function_call("apply_patch", {"input": PATCH}, "call_patch")]),
        ScriptedResponse([assistant("created src/app.py")]),
    ]
    async with open_session(tmp_path, script) as run:
        assert await run.session.run_turn("create the app") == "created src/app.py"
    assert run.session.rollout_path is not None
    return run, run.session.history.for_prompt(), run.session.rollout_path


async def test_a_resumed_turn_sees_the_history_once_and_writes_no_full_world_state(
    tmp_path: Path,
) -> None:
    first, history, path = await first_session(tmp_path)
    before = describe_rollout(first.rollout())
    baseline = first.session.history.world_state_baseline
    assert baseline is not None

    script = [ScriptedResponse([assistant("it prints hi")])]
    async with open_session(tmp_path, script, resume_path=path) as run:
        assert run.session.session_id == first.session.session_id
        assert run.session.history.world_state_baseline == baseline
        assert run.events_of(SessionConfigured)[0].resumed
        assert await run.session.run_turn("what does it print?") == "it prints hi"

    (prompt,) = run.prompts
    assert list(prompt.input) == [*history, user_message("what does it print?")]
    lines = run.rollout()
    assert describe_rollout(lines) == [
        *before,
        "event task_started",
        "turn_context",
        "item message/user:what does it print?",
        "event user_message",
        "item message/assistant:it prints hi",
        "event task_complete",
    ]
    result = check_rollout(lines)
    assert result.violations == []
    assert result.baseline == baseline.to_json()


async def test_changes_made_while_closed_arrive_as_a_diff_against_the_restored_baseline(
    tmp_path: Path,
) -> None:
    first, history, path = await first_session(tmp_path)
    before = describe_rollout(first.rollout())
    (first.cwd / "NOTES.md").write_text("written by the user\n")

    script = [ScriptedResponse([assistant("noted")])]
    async with open_session(tmp_path, script, resume_path=path) as run:
        assert await run.session.run_turn("anything new?") == "noted"

    (prompt,) = run.prompts
    update = Message(
        role="user",
        content=[InputText(text="<workspace_files>\nAdded files:\nNOTES.md\n</workspace_files>")],
    )
    assert list(prompt.input) == [*history, update, user_message("anything new?")]
    assert describe_rollout(run.rollout())[len(before) :] == [
        "event task_started",
        "item message/user:<workspace_files>",
        "world_state patch workspace",
        "turn_context",
        "item message/user:anything new?",
        "event user_message",
        "item message/assistant:noted",
        "event task_complete",
    ]
    result = check_rollout(run.rollout())
    assert result.violations == []
    assert sorted(result.baseline["workspace"]["files"]) == ["NOTES.md", "src/app.py"]


async def test_resuming_twice_keeps_one_copy_of_the_context(tmp_path: Path) -> None:
    _, _, path = await first_session(tmp_path)
    for question in ("one?", "two?"):
        script = [ScriptedResponse([assistant(question.upper())])]
        async with open_session(tmp_path, script, resume_path=path) as run:
            await run.session.run_turn(question)
    prompt_layout = layout(run.prompts[0].input)
    assert [line for line in prompt_layout if "<permissions instructions>" in line] == [
        prompt_layout[0]
    ]
    assert prompt_layout[-4:] == [
        "message/assistant:created src/app.py",
        "message/user:one?",
        "message/assistant:ONE?",
        "message/user:two?",
    ]
    lines = run.rollout()
    assert sum(1 for line in describe_rollout(lines) if line == "world_state full") == 1
    assert check_rollout(lines).violations == []


async def test_checkpoints_written_between_steps_resume_to_the_same_history(
    tmp_path: Path,
) -> None:
    config = load_config(
        None, ["rollout.checkpoint_every_items=2", "rollout.checkpoint_min_ratio=0"]
    )
    script = [
        ScriptedResponse([function_call("apply_patch", {"input": PATCH}, "call_patch")]),
        ScriptedResponse([function_call("update_plan", PLAN, "call_plan")]),
        ScriptedResponse([assistant("planned")]),
    ]
    async with open_session(tmp_path, script, config=config) as first:
        assert await first.session.run_turn("plan it") == "planned"
    history = first.session.history.for_prompt()
    assert first.session.rollout_path is not None
    assert "compacted" in describe_rollout(first.rollout())
    assert check_rollout(first.rollout()).violations == []

    script = [ScriptedResponse([assistant("resumed")])]
    async with open_session(
        tmp_path, script, resume_path=first.session.rollout_path, config=config
    ) as run:
        assert await run.session.run_turn("go on") == "resumed"

    assert list(run.prompts[0].input) == [*history, user_message("go on")]
    assert check_rollout(run.rollout()).violations == []


async def test_resuming_with_another_model_announces_the_switch_once(tmp_path: Path) -> None:
    first, history, path = await first_session(tmp_path)
    before = len(first.rollout())
    config = load_config(None, ["model=gpt-other"])
    script = [ScriptedResponse([assistant("switched")])]
    async with open_session(tmp_path, script, resume_path=path, config=config) as run:
        await run.session.run_turn("carry on")

    assert layout(run.prompts[0].input)[len(history) :] == [
        "message/developer:<model_switch>",
        "message/user:carry on",
    ]
    assert describe_rollout(run.rollout())[before : before + 4] == [
        "event task_started",
        "item message/developer:<model_switch>",
        "world_state patch model",
        "turn_context",
    ]
    assert check_rollout(run.rollout()).violations == []
