"""The example extension (``examples/extensions/step_counter``), installed for real with uv into a
target folder, is found through its entry point, contributes its section to the world state, and
its stores behave as documented (docs/extensions.md): the turn store survives the steps of a turn
and starts again in the next turn, the thread store survives across turns."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mini_codex.config import Config
from mini_codex.host import SessionOptions, open_options
from mini_codex.protocol import InputText, Message
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant, function_call
from mini_codex.world_state import EXTENSION_ENTRY_POINT_GROUP, load_extensions

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "extensions" / "step_counter"
MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``uv pip install --target DIR examples/extensions/step_counter`` (a real wheel build)."""
    uv = shutil.which("uv")
    command = [uv] if uv else [sys.executable, "-m", "uv"]
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [*command, "pip", "install", "--quiet", "--no-deps", "--target", str(target),
         "--python", sys.executable, str(EXAMPLE)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return target


def _counter_texts(messages: object) -> list[str]:
    assert isinstance(messages, list | tuple)
    return [
        part.text
        for item in messages
        if isinstance(item, Message) and item.role == "developer"
        for part in item.content
        if isinstance(part, InputText) and part.text.startswith("<step_counter>")
    ]


async def test_the_section_appears_and_its_stores_survive_steps_and_turns(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(installed))
    points = [
        ep
        for dist in importlib.metadata.distributions(path=[str(installed)])
        for ep in dist.entry_points
        if ep.group == EXTENSION_ENTRY_POINT_GROUP
    ]
    assert [(ep.name, ep.value) for ep in points] == [
        ("step_counter", "mini_codex_step_counter:StepCounter")
    ]
    extensions = load_extensions(points)
    plan = {"plan": [{"step": "count", "status": "completed"}]}
    model = ScriptedModel(
        [
            ScriptedResponse([function_call("update_plan", plan)]),
            ScriptedResponse([assistant("first turn done")]),
            ScriptedResponse([assistant("second turn done")]),
        ]
    )
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (work / ".agents" / "skills").mkdir(parents=True)  # one ready capability root
    options = SessionOptions(
        cwd=work, home=home, client=model, config=Config(), extensions=extensions
    )
    async with open_options(options) as session:
        await session.run_turn("count my steps")
        await session.run_turn("and again")
        thread = session.session_id
        world_state = session.history.world_state_baseline
    prompts = model.prompts
    tail = "ready capability roots; environment local."
    assert _counter_texts(prompts[0].input) == [
        f"<step_counter>Thread {thread}: turn 1, step 1 of this turn; 1 {tail}</step_counter>"
    ]
    new_in_second = list(prompts[1].input)[len(prompts[0].input) :]
    assert _counter_texts(new_in_second) == [
        f"<step_counter>Thread {thread}: turn 1, step 2 of this turn; 1 {tail}</step_counter>"
    ]
    new_in_third = list(prompts[2].input)[len(prompts[1].input) :]
    assert _counter_texts(new_in_third) == [
        f"<step_counter>Thread {thread}: turn 2, step 1 of this turn; 1 {tail}</step_counter>"
    ]
    assert world_state is not None
    assert world_state.to_json()["step_counter"] == {
        "thread": thread, "turn": 2, "step": 1, "ready_roots": 1, "environment": "local"
    }  # fmt: skip


def test_the_cli_loads_the_installed_extension(installed: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"output": [{"type": "message", "content": "ok"}]}) + "\n")
    work = tmp_path / "work"
    work.mkdir()
    trace = tmp_path / "requests.jsonl"
    done = subprocess.run(
        [MINI_CODEX, "exec", "-C", str(work), "--model", f"scripted:{script}",
         "--trace-requests", str(trace), "hello"],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
             "MINI_CODEX_HOME": str(tmp_path / "home"), "PYTHONPATH": str(installed)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "<step_counter>Thread " in trace.read_text()
