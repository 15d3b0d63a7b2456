"""Start the UI: the app and its session host side by side in one task group.

The host's session is closed when the app stops for any reason (``/quit``, Ctrl+D, an unhandled
error in the UI): the task group cancels the host, ``Session.open`` shuts the session down and the
rollout writer flushes and closes. ``ui_harness`` is the same wiring for headless tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from mini_codex.tui.app import MiniCodexApp
from mini_codex.tui.history import PromptHistory
from mini_codex.tui.host import SessionHost, SessionOpener, Target

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from mini_codex.tools.images import ImageFile


def build_app(
    opener: SessionOpener,
    *,
    target: Target,
    home: Path | None,
    initial_prompt: str | None = None,
    files: tuple[str, ...] | None = None,
    images: tuple[ImageFile, ...] = (),
) -> MiniCodexApp:
    history = PromptHistory(home / "history.jsonl" if home is not None else None)
    return MiniCodexApp(
        SessionHost(opener, target),
        history=history,
        home=home,
        initial_prompt=initial_prompt,
        files=files,
        images=images,
    )


async def run_ui(app: MiniCodexApp, *, inline: bool = True, headless: bool = False) -> int:
    """Run ``app`` on this terminal until it exits; returns its exit code."""
    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(app.host.run, app, app.approval_callback)
        try:
            await app.run_async(inline=inline, inline_no_clear=True, headless=headless)
        except Exception as exc:  # the UI failed: still close the session cleanly first
            failure = exc
        finally:
            app.host.stop()
    if failure is not None:
        raise failure
    return app.return_code or 0


@asynccontextmanager
async def ui_harness(
    app: MiniCodexApp, size: tuple[int, int] = (80, 24)
) -> AsyncIterator[Pilot[None]]:
    """``app`` headless (Textual's pilot) with its session host running."""
    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(app.host.run, app, app.approval_callback)
        try:
            async with app.run_test(size=size) as pilot:
                yield pilot
        except Exception as exc:  # a failed check: close the session cleanly, then report it
            failure = exc
        finally:
            app.host.stop()
    if failure is not None:
        raise failure
