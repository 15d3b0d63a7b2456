"""A model that sabotages its own workspace cannot stall the next step (issue 19).

Reproductions: the model makes AGENTS.md a symlink to a FIFO (the old capture blocked forever in
``open``) and truncates ``.gitignore`` to 20 MB (the old capture needed > 100 s). The next step
must start within 2 s and its request must tell the model what was skipped. A file system that
is slow is simulated through the scanner's ``_stat`` seam: the step goes on after the deadline.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from msgspec.structs import replace
from runtime_harness import SleepTool, open_session

from mini_codex.discovery.workspace import WorkspaceScanner
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.runtime.capture import build_world_state, capture_step
from mini_codex.runtime.deadline import LATE, DeadlineCall
from mini_codex.testing import ScriptedResponse, assistant, function_call
from mini_codex.tools.base import ToolContext
from mini_codex.world_state.sections.capture_notes import HEADER

pytestmark = pytest.mark.anyio


def _unblock_fifo_later(fifo: Path, after_s: float, fired: list[bool]) -> threading.Timer:
    """If a reader is stuck opening the FIFO (the old code), open it for writing to free it."""

    def fire() -> None:
        fired.append(True)
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK) if _has_reader(fifo) else None
        if fd is not None:
            os.close(fd)

    timer = threading.Timer(after_s, fire)
    timer.daemon = True
    timer.start()
    return timer


def _has_reader(fifo: Path) -> bool:
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        return False
    return True


def _notes_text(prompt_items: list[dict[str, Any]]) -> str:
    """The one ``<capture_notes>`` fragment among a request's input items."""
    texts = [
        part["text"]
        for item in prompt_items
        for part in item.get("content") or []
        if isinstance(part, dict) and "<capture_notes>" in str(part.get("text"))
    ]
    assert len(texts) == 1, texts
    return str(texts[0])


async def test_fifo_agents_md_and_huge_gitignore_do_not_stall_the_next_step(
    tmp_path: Path,
) -> None:
    times: dict[str, float] = {}

    async def sabotage(ctx: ToolContext) -> None:
        work = tmp_path / "work"
        os.mkfifo(work / "pipe")
        (work / "AGENTS.md").unlink()
        (work / "AGENTS.md").symlink_to(work / "pipe")
        os.truncate(work / ".gitignore", 20 * 1024 * 1024)  # as `truncate -s 20M` does
        times["sabotaged"] = time.monotonic()

    async def probe(phase: str) -> None:
        times[phase] = time.monotonic()

    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").mkdir()
    (work / "AGENTS.md").write_text("be nice")
    (work / ".gitignore").write_text("*.log\n")
    tool = SleepTool("sabotage", on_start=sabotage)
    script = [
        ScriptedResponse([function_call("sabotage", {}, "call_1")]),
        ScriptedResponse([assistant("done")]),
    ]
    fired: list[bool] = []
    timer = _unblock_fifo_later(work / "pipe", 10.0, fired)
    try:
        with anyio.fail_after(60):
            async with open_session(tmp_path, script, tools=[tool], probe=probe) as run:
                await run.session.run_turn("go")
    finally:
        timer.cancel()
    assert fired == []
    # The second step's capture began after the tool and ended within 2 s.
    assert times["environments"] > times["sabotaged"]
    assert times["tools"] - times["environments"] < 2.0
    second = [item.to_json() for item in run.prompts[1].input]
    notes = _notes_text(second)
    assert HEADER in notes
    assert f"AGENTS.md file {work}/AGENTS.md is a FIFO; skipped" in notes
    ignored = "- ignore file .gitignore: larger than 1048576 bytes: lines after byte 6 ignored\n"
    assert ignored in notes
    # The first request had no notes: nothing was skipped then.
    assert not [i for i in run.prompts[0].input if "<capture_notes>" in str(i.to_json())]


class _SlowScanner(WorkspaceScanner):
    """A scanner over a file system whose ``stat`` hangs until released (the test seam)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.release = threading.Event()
        self.hang = False

    def _stat(self, path: str) -> os.stat_result:
        if self.hang:
            self.release.wait(30)
        return os.stat(path)


async def test_a_late_workspace_scan_leaves_the_previous_listing_and_a_note(
    tmp_path: Path,
) -> None:
    async with open_session(tmp_path, []) as run:
        session = run.session
        scanner = _SlowScanner(run.cwd)
        session.caches.scanner = scanner
        settings = replace(session.capture, workspace_deadline_s=0.2)
        turn = run.session.new_turn_context()
        first = (await capture_step(turn, settings, session.caches, 1)).step
        assert (first.workspace is not None, first.notes) == (True, ())
        scanner.hang = True
        (run.cwd / "new.txt").write_text("x")
        started = time.monotonic()
        late = (await capture_step(turn, settings, session.caches, 2)).step
        elapsed = time.monotonic() - started
        assert (late.workspace, late.notes) == (
            first.workspace,
            (
                "listing the workspace files took longer than 0.2 s; what you see is from an "
                "earlier request and may be out of date",
            ),
        )
        assert elapsed < 2.0
        world_state = build_world_state(late, previous_model=None)
        assert "capture_notes" in world_state.ids
        scanner.hang = False
        scanner.release.set()
        fresh = (await capture_step(turn, settings, session.caches, 3)).step
        assert fresh.workspace is not None
        assert ("new.txt" in fresh.workspace, fresh.notes) == (True, ())


async def test_a_deadline_call_runs_one_call_at_a_time() -> None:
    release = threading.Event()
    calls: list[int] = []

    def slow() -> int:
        calls.append(1)
        release.wait(30)
        return len(calls)

    call: DeadlineCall[int] = DeadlineCall("test")
    assert await call.call(slow, 0.05) is LATE
    assert await call.call(slow, 0.05) is LATE  # still the first call: no second thread
    assert (calls, call.running) == ([1], True)
    release.set()
    assert await call.call(slow, 5.0) == 2  # the stale result is dropped, a fresh call runs
    assert call.running is False


async def test_non_utf8_names_reach_the_model_and_the_rollout_escaped(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / os.fsdecode(b"caf\xe9.txt")).write_text("x")
    async with open_session(tmp_path, [ScriptedResponse([assistant("ok")])]) as run:
        await run.session.run_turn("go")
    notes = _notes_text([item.to_json() for item in run.prompts[0].input])
    assert "- skipped a name that is not valid UTF-8: 'caf\\udce9.txt'\n" in notes
    lines = run.rollout()  # the notes were recorded (UTF-8 JSON) and read back
    assert check_rollout(lines).violations == []
