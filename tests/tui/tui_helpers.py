"""Helpers for the headless UI tests (imported by the test modules of this directory)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

from textual.pilot import Pilot

from mini_codex.tui.app import MiniCodexApp


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


def png(width: int, height: int) -> bytes:
    """A real PNG of ``width`` × ``height`` green pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x00\xff\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
