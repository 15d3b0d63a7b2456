"""``Session.submit`` takes input items too (the UI's message with images): they open a turn, or,
while one runs, join its pending input like steered text and reach the next request."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from runtime_harness import open_session

from mini_codex.protocol import InputImage, InputText, Message
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.protocol.session_events import ExecCommandOutputDelta, TaskComplete
from mini_codex.testing import ScriptedResponse, assistant, function_call

pytestmark = pytest.mark.anyio

URL = "data:image/png;base64,iVBORw0KGgo="


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def picture(text: str) -> Message:
    return Message(role="user", content=[InputText(text=text), InputImage(image_url=URL)])


async def test_items_submitted_while_a_turn_runs_reach_its_next_request(tmp_path: Path) -> None:
    script = [
        ScriptedResponse(
            [
                function_call(
                    "shell",
                    {"command": "echo waiting; while [ ! -e go ]; do sleep 0.05; done"},
                    "s1",
                )
            ]
        ),
        ScriptedResponse([assistant("saw it")]),
        ScriptedResponse([assistant("second turn")]),
    ]
    started = anyio.Event()
    finished = anyio.Event()

    def on_event(event: object) -> None:
        if isinstance(event, ExecCommandOutputDelta):
            started.set()
        if isinstance(event, TaskComplete):
            finished.set()

    sandbox = SandboxPolicy.danger_full_access()
    async with open_session(tmp_path, script, sandbox=sandbox, on_event=on_event) as run:
        run.session.submit("run it")
        with anyio.fail_after(20):
            await started.wait()
        run.session.submit([picture("look at this")])
        (run.cwd / "go").touch()
        with anyio.fail_after(20):
            await finished.wait()
        first, second = run.prompts[0].input, run.prompts[1].input
        assert picture("look at this") not in first
        assert second[len(first) + 2] == picture("look at this")  # after the call and output
        assert await run.session.run_turn([picture("and this")]) == "second turn"
        assert picture("and this") in run.prompts[2].input
