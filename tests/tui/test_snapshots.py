"""Snapshots of the main screens at 80×24, compared with the SVGs committed under snapshots/.

Set ``MINI_CODEX_UPDATE_SNAPSHOTS=1`` to rewrite them (then look at them: they are the README's
screenshots too). Run-dependent text (durations, Textual's per-render class ids) is normalised.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList
from tui_helpers import idle, png, type_and_send, wait_for

from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant, function_call, reasoning
from mini_codex.tools.images import load_image
from mini_codex.tui.app import MiniCodexApp
from mini_codex.tui.composer import Composer
from mini_codex.tui.host import PICK
from mini_codex.tui.run import ui_harness
from mini_codex.tui.screens import ApprovalScreen, ResumePicker

pytestmark = pytest.mark.anyio

SNAPSHOTS = Path(__file__).parent / "snapshots"
WORK = Path("/tmp/mini-codex-tui-snapshots/work")
"""A fixed workspace path, so the paths shown are the same in every run."""
LOCK = Path("/tmp/mini-codex-tui-snapshots.lock")

PATCH = (
    "*** Begin Patch\n*** Add File: hello.py\n+import sys\n+print('hello from', sys.argv[0])\n"
    "*** End Patch"
)
PLAN = {
    "plan": [
        {"step": "write hello.py", "status": "completed"},
        {"step": "run it", "status": "in_progress"},
    ]
}


def normalise(svg: str) -> str:
    svg = re.sub(r"terminal-\d+", "terminal-N", svg)
    svg = re.sub(r"\d{4}-\d\d-\d\d(?:&#160;| )\d\d:\d\d", "2026-12-01 12:00", svg)
    return re.sub(r"\d+\.\ds", "0.0s", svg)


def check_snapshot(app: MiniCodexApp, name: str) -> None:
    svg = normalise(app.export_screenshot(title="mini-codex"))
    path = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("MINI_CODEX_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(svg, encoding="utf-8")
    assert path.exists(), f"no snapshot {path}; run with MINI_CODEX_UPDATE_SNAPSHOTS=1"
    assert svg == path.read_text(encoding="utf-8"), f"{name} differs from {path}"


@pytest.fixture
def snap_harness(make_harness, tmp_path):
    # WORK is one fixed path for every checkout on this machine: runs take turns (a lock file).
    with open(LOCK, "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(WORK.parent, ignore_errors=True)
        WORK.mkdir(parents=True)

        def make(script: list[ScriptedResponse], policy: str = "never"):
            harness = make_harness(script, policy)
            harness.work = WORK
            return harness

        yield make
        shutil.rmtree(WORK.parent, ignore_errors=True)


async def shoot(
    app: MiniCodexApp, name: str, until: Callable[[Pilot[None]], Awaitable[None]]
) -> None:
    async with ui_harness(app, size=(80, 24)) as pilot:
        await until(pilot)
        app.query_one(Composer).cursor_blink = False  # a steady cursor: no blink phase in SVGs
        previous = ""
        for _ in range(50):  # until the screen stops changing (layout and scrolling settled)
            await pilot.pause(0.15)
            current = app.export_screenshot()
            if current == previous:
                break
            previous = current
        check_snapshot(app, name)


async def test_snapshot_conversation(snap_harness) -> None:
    harness = snap_harness(
        [
            ScriptedResponse(
                [reasoning("Write the file, then run it."), function_call("update_plan", PLAN)]
            ),
            ScriptedResponse([function_call("apply_patch", {"input": PATCH}, "p1")]),
            ScriptedResponse([function_call("shell", {"command": "python3 hello.py"}, "s1")]),
            ScriptedResponse([assistant("Created `hello.py`; it prints **hello**.")]),
        ]
    )
    app = harness.app(prompt="create hello.py and run it")

    async def until(pilot: Pilot[None]) -> None:
        await wait_for(pilot, lambda: idle(app) and len(app.transcript_lines()) >= 7)
        await wait_for(pilot, lambda: "Created" in app.export_screenshot())

    await shoot(app, "conversation", until)


async def test_snapshot_approval(snap_harness) -> None:
    harness = snap_harness(
        [ScriptedResponse([function_call("shell", {"command": "rm -rf build"}, "c1")])],
        policy="untrusted",
    )
    app = harness.app(prompt="clean the build")

    async def until(pilot: Pilot[None]) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))

    await shoot(app, "approval", until)


async def test_snapshot_slash_menu(snap_harness) -> None:
    app = snap_harness([]).app()

    async def until(pilot: Pilot[None]) -> None:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press("/")
        await wait_for(pilot, lambda: app.query_one("#menu").display is True)

    await shoot(app, "slash_menu", until)


async def test_snapshot_resume_picker(snap_harness) -> None:
    harness = snap_harness([ScriptedResponse([assistant("ok")])])
    first = harness.app()
    async with ui_harness(first) as pilot:
        await wait_for(pilot, lambda: first.session is not None)
        await type_and_send(pilot, "fix the failing test in tests/test_io.py")
        await wait_for(pilot, lambda: idle(first) and "ok" in first.transcript_lines())
    harness.model = ScriptedModel([])
    app = harness.app(target=PICK)

    async def until(pilot: Pilot[None]) -> None:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ResumePicker) and bool(app.screen.query(OptionList)),
        )

    await shoot(app, "resume_picker", until)


async def test_snapshot_shell_live_tail(snap_harness) -> None:
    command = (
        'for i in $(seq 1 20); do echo "test_$i ... ok"; done; '
        "while [ ! -e go ]; do sleep 0.05; done"
    )
    harness = snap_harness(
        [
            ScriptedResponse([function_call("shell", {"command": command}, "s1")]),
            ScriptedResponse([assistant("ok")]),
        ]
    )
    app = harness.app(prompt="run the tests")

    async def until(pilot: Pilot[None]) -> None:
        await wait_for(
            pilot, lambda: any("test_20 ... ok" in line for line in app.transcript_lines())
        )

    await shoot(app, "shell_live_tail", until)  # the command is still running


async def test_snapshot_exec_cells(snap_harness) -> None:
    harness = snap_harness(
        [
            ScriptedResponse(
                [function_call("exec_command", {"cmd": "python3 -c 'print(6*7)'"}, "e1")]
            ),
            ScriptedResponse(
                [
                    function_call(
                        "exec_command",
                        {"cmd": "echo ready; read name; echo hi $name", "yield_time_ms": 2000},
                        "e2",
                    )
                ]
            ),
            ScriptedResponse(
                [
                    function_call(
                        "write_stdin",
                        {"session_id": 2, "chars": "ada\n", "yield_time_ms": 5000},
                        "w1",
                    )
                ]
            ),
            ScriptedResponse([assistant("It answered **hi ada**.")]),
        ]
    )
    harness.unified_exec = True
    app = harness.app(prompt="greet ada")

    async def until(pilot: Pilot[None]) -> None:
        await wait_for(
            pilot, lambda: idle(app) and "It answered **hi ada**." in app.transcript_lines()
        )

    await shoot(app, "exec_cells", until)


async def test_snapshot_images(snap_harness) -> None:
    (WORK / "screenshot.png").write_bytes(png(1280, 800))
    (WORK / "diagram.png").write_bytes(png(64, 48))
    harness = snap_harness([ScriptedResponse([assistant("A login form with two fields.")])])
    app = harness.app(
        prompt="what does this screenshot show?", images=(load_image(WORK / "screenshot.png"),)
    )

    async def until(pilot: Pilot[None]) -> None:
        await wait_for(pilot, lambda: idle(app) and len(app.transcript_lines()) >= 3)
        await type_and_send(pilot, "/image diagram.png")
        await wait_for(pilot, lambda: bool(app.attachments))

    await shoot(app, "images", until)
