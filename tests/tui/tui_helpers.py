"""Helpers for the headless UI tests (imported by the test modules of this directory)."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot

from image_files import png
from mini_codex.tui.app import MiniCodexApp

__all__ = ["idle", "png", "type_and_send", "wait_for"]


async def wait_for(pilot: Pilot[None], check: Callable[[], bool], limit_s: float = 10.0) -> None:
    """Let the app run until ``check()`` holds; fails after ``limit_s`` seconds."""
    for _ in range(int(limit_s / 0.05)):
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError("the UI never reached the expected state")


async def type_and_send(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")


def idle(app: MiniCodexApp) -> bool:
    return app.session is not None and not app.session.turn_active and not app.turn_running
