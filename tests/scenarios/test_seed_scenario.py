"""The seed scenario of the runtime (DESIGN I1, I7, I8): a tool creates a file in step 1 and the
request of step 2 shows it.

A real Session runs over a ScriptedModel (the only fake) in a temporary workspace: ``apply_patch``
really writes the file, the workspace scanner really sees it, the rollout recorder really writes
the JSONL file that ``rollout verify`` then checks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_codex.config import Config
from mini_codex.host import Session, SessionOptions, open_options
from mini_codex.models.base import Prompt
from mini_codex.protocol import (
    EventMsgLine,
    FunctionCall,
    FunctionCallOutput,
    InputText,
    Message,
    ResponseItemLine,
    RolloutLine,
    SessionMetaLine,
    TurnContextLine,
    WorldStateLine,
)
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant, function_call
from mini_codex.world_state import format_model_visible_layout

pytestmark = pytest.mark.anyio

PATCH = "*** Begin Patch\n*** Add File: notes/todo.txt\n+write the seed test\n*** End Patch\n"
WORKSPACE_UPDATE = Message(
    role="user",
    content=[InputText(text="<workspace_files>\nAdded files:\nnotes/todo.txt\n</workspace_files>")],
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def run_seed(tmp_path: Path) -> tuple[Session, ScriptedModel, Path]:
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "README.md").write_text("seed\n")
    model = ScriptedModel(
        [
            ScriptedResponse([function_call("apply_patch", {"input": PATCH}, "call_patch")]),
            ScriptedResponse([assistant("Added notes/todo.txt.")]),
        ]
    )
    options = SessionOptions(
        cwd=cwd, home=tmp_path / "home", client=model, config=Config(), env={"PATH": "/usr/bin"}
    )
    async with open_options(options) as session:
        assert await session.run_turn("add a todo file") == "Added notes/todo.txt."
    return session, model, cwd.resolve()


def normalized_layout(prompt: Prompt, cwd: Path) -> list[str]:
    return [line.replace(str(cwd), "<cwd>") for line in format_model_visible_layout(prompt.input)]


def describe(line: RolloutLine) -> str:
    match line:
        case SessionMetaLine():
            return "session_meta"
        case ResponseItemLine(payload=item):
            return "response_item " + format_model_visible_layout([item])[0].split(":", 1)[1]
        case WorldStateLine(payload=payload):
            return "world_state " + ("full" if payload.full else "patch " + ",".join(payload.state))
        case TurnContextLine():
            return "turn_context"
        case EventMsgLine(payload=event):
            return "event_msg " + str(event.to_json()["type"])
        case _:
            return "other"


async def test_a_file_created_by_a_tool_in_step_1_is_in_the_request_of_step_2(
    tmp_path: Path,
) -> None:
    _, model, cwd = await run_seed(tmp_path)

    assert (cwd / "notes" / "todo.txt").read_text() == "write the seed test\n"
    first, second = model.prompts
    # I7: a new capture, hence a new step id, in the same turn.
    assert (first.turn_id, first.step_sequence) == (second.turn_id, 1)
    assert second.step_sequence == 2
    assert first.step_id != second.step_id
    assert first.tools == second.tools
    # The exact model-visible layout of both requests.
    context = [
        "00:message/developer[2]:",
        "    [01] <permissions instructions>",
        "    [02] <tool_namespaces>",
        "01:message/user[2]:",
        "    [01] <environment_context>",
        "    [02] <workspace_files>",
        "02:message/user:add a todo file",
    ]
    assert normalized_layout(first, cwd) == context
    assert normalized_layout(second, cwd) == [
        *context,
        "03:function_call/apply_patch",
        "04:function_call_output:Success. Updated the following files:",
        "05:message/user:<workspace_files>",
    ]
    # The step-2 update is exactly the added file, and nothing else.
    assert second.input[3:] == (
        FunctionCall(
            name="apply_patch",
            arguments=first_call_arguments(),
            call_id="call_patch",
            id="fc_1_0",
        ),
        FunctionCallOutput(
            call_id="call_patch", output="Success. Updated the following files:\nA notes/todo.txt\n"
        ),
        WORKSPACE_UPDATE,
    )
    assert second.input[:3] == first.input


def first_call_arguments() -> str:
    return function_call("apply_patch", {"input": PATCH}).arguments


async def test_the_rollout_records_the_update_before_its_world_state_patch(
    tmp_path: Path,
) -> None:
    session, _, _ = await run_seed(tmp_path)
    assert session.rollout_path is not None

    rollout = read_rollout(session.rollout_path)

    assert rollout.warnings == ()
    assert [describe(line) for line in rollout.lines] == [
        "session_meta",
        "event_msg task_started",
        "response_item message/developer[2]:",
        "response_item message/user[2]:",
        "world_state full",
        "turn_context",
        "response_item message/user:add a todo file",
        "event_msg user_message",
        "response_item function_call/apply_patch",
        # The policy's decision about the patch (inside the writable roots: applied).
        "event_msg safety_decision",
        "response_item function_call_output:Success. Updated the following files:",
        # I1: the update's item first, then the patch describing it.
        "response_item message/user:<workspace_files>",
        "world_state patch workspace",
        "response_item message/assistant:Added notes/todo.txt.",
        "event_msg task_complete",
    ]
    update = rollout.lines[11]
    assert isinstance(update, ResponseItemLine)
    assert update.payload == WORKSPACE_UPDATE
    patch = rollout.lines[12]
    assert isinstance(patch, WorldStateLine)
    assert patch.payload.state["workspace"]["files"] == {"notes/todo.txt": 1}


async def test_rollout_verify_finds_no_violation_and_replays_the_live_baseline(
    tmp_path: Path,
) -> None:
    session, _, _ = await run_seed(tmp_path)
    assert session.rollout_path is not None

    result = check_rollout(read_rollout(session.rollout_path).lines)

    assert result.violations == []
    baseline = session.history.world_state_baseline
    assert baseline is not None
    assert result.baseline == baseline.to_json()
    assert sorted(result.baseline["workspace"]["files"]) == ["README.md", "notes/todo.txt"]


async def test_files_the_shell_creates_and_deletes_are_in_the_next_request(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "old.txt").write_text("old\n")
    command = "rm old.txt && mkdir -p out && echo built > out/result.txt"
    model = ScriptedModel(
        [
            ScriptedResponse([function_call("shell", {"command": command}, "call_sh")]),
            ScriptedResponse([assistant("rebuilt")]),
        ]
    )
    options = SessionOptions(
        cwd=cwd, home=tmp_path / "home", client=model, env={"PATH": "/usr/bin:/bin"}
    )
    async with open_options(options) as session:
        assert await session.run_turn("rebuild") == "rebuilt"

    first, second = model.prompts
    assert second.step_id != first.step_id
    assert second.input[-1] == Message(
        role="user",
        content=[
            InputText(
                text="<workspace_files>\nAdded files:\nout/result.txt\n"
                "Removed files:\nold.txt\n</workspace_files>"
            )
        ],
    )
    assert session.rollout_path is not None
    assert check_rollout(read_rollout(session.rollout_path).lines).violations == []
