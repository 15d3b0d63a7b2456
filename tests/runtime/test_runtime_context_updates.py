"""Turn-start context updates (spec/codex-runtime.md §3.5, §10 cases 1 and 3; DESIGN I1, I3).

* No reference context item: the full initial context is recorded, then a FULL ``world_state``,
  then ``turn_context``; the reference becomes the turn's ``TurnContextItem``.
* A reference equal to the current settings and an unchanged world state: a new turn adds no
  history item, but the reference advances to the new turn and ``turn_context`` is persisted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_harness import describe_rollout, layout, open_session

from mini_codex.protocol import TurnContextLine
from mini_codex.testing import ScriptedResponse, assistant

pytestmark = pytest.mark.anyio


async def test_without_a_reference_the_full_initial_context_is_recorded(tmp_path: Path) -> None:
    async with open_session(tmp_path, [ScriptedResponse([assistant("hi")])]) as run:
        assert run.session.state.reference_context is None
        await run.session.run_turn("hello")
        turn_id = run.prompts[0].turn_id
        reference = run.session.state.reference_context

    assert reference is not None
    assert reference.turn_id == turn_id
    assert layout(run.session.history.items) == [
        "message/developer[2]: | [01] <permissions instructions> | [02] <tool_namespaces>",
        "message/user[2]: | [01] <environment_context> | [02] <workspace_files>",
        "message/user:hello",
        "message/assistant:hi",
    ]
    lines = run.rollout()
    assert describe_rollout(lines)[2:6] == [
        "item message/developer[2]: | [01] <permissions instructions> | [02] <tool_namespaces>",
        "item message/user[2]: | [01] <environment_context> | [02] <workspace_files>",
        "world_state full",
        "turn_context",
    ]
    turn_context = lines[5]
    assert isinstance(turn_context, TurnContextLine)
    assert turn_context.payload == reference


async def test_an_unchanged_next_turn_adds_no_context_but_advances_the_reference(
    tmp_path: Path,
) -> None:
    script = [ScriptedResponse([assistant("one")]), ScriptedResponse([assistant("two")])]
    async with open_session(tmp_path, script) as run:
        await run.session.run_turn("first")
        before = len(run.session.history.items)
        first_reference = run.session.state.reference_context
        lines_before = len(run.rollout())
        await run.session.run_turn("second")
        second_reference = run.session.state.reference_context

    assert first_reference is not None
    assert second_reference is not None
    assert second_reference.turn_id == run.prompts[1].turn_id != first_reference.turn_id
    assert second_reference.model_copy(update={"turn_id": ""}) == first_reference.model_copy(
        update={"turn_id": ""}
    )
    assert layout(run.session.history.items[before:]) == [
        "message/user:second",
        "message/assistant:two",
    ]
    lines = run.rollout()
    assert describe_rollout(lines[lines_before:]) == [
        "event task_started",
        "turn_context",
        "item message/user:second",
        "event user_message",
        "item message/assistant:two",
        "event task_complete",
    ]
    assert lines[lines_before + 1] == TurnContextLine(payload=second_reference).model_copy(
        update={"timestamp": lines[lines_before + 1].timestamp}
    )
