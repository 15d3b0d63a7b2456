"""The import guard of the UI (issue 30): the composer is painted before the session runtime, the
protocol, pydantic, typer or the Markdown widget are imported.

The real ``mini-codex`` command line (``entry.main``) runs in a tmux terminal, inline. The
script wraps ``SessionHost.run`` so that, when the app signals its first frame (``mounted``, set
after the first refresh; the host opens the session only then), the names in ``sys.modules`` are
written to a file before the session is opened. The test then waits for the composer on the
screen and for the session to open: the runtime is still loaded, only later.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HEAVY = (
    "pydantic",
    "typer",
    "markdown_it",
    "pygments",
    "httpx",
    "httpx2",
    "openai",
    "mcp",
    "jsonschema",
    "yaml",
    "tomlkit",
    "sqlite3",
    "msgspec",
    "mini_codex.protocol",
    "mini_codex.runtime",
    "mini_codex.host",
    "mini_codex.config",
    "mini_codex.models",
    "mini_codex.rollout",
    "mini_codex.cli.main",
    "mini_codex.cli.run",
    "mini_codex.tui.dispatch",
    "mini_codex.tui.screens",
)
"""Packages and modules the UI must not import before its first frame."""

PAINTED = ("textual.app", "mini_codex.tui.app", "mini_codex.tui.composer")
"""Imported before the first frame: their presence proves the listing was taken in the UI."""

SCRIPT = """
import sys
{before}
import mini_codex.tui.host as host

original = host.SessionHost.run


async def run(self, app, callback):
    await app.mounted.wait()
    import gc
    with open({out!r} + ".gc", "w") as collector:
        collector.write(str(gc.isenabled()))
    with open({out!r}, "w") as listing:
        listing.write("\\n".join(sorted(sys.modules)))
    await original(self, app, callback)


host.SessionHost.run = run
from mini_codex.cli.entry import main

main()
"""


@pytest.fixture
def tmux_socket(tmp_path: Path) -> Iterator[str]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    socket = f"mini-codex-imports-{os.getpid()}-{tmp_path.name}"
    yield socket
    subprocess.run(["tmux", "-L", socket, "kill-server"], check=False, capture_output=True)


def modules_at_first_frame(socket: str, tmp_path: Path, before: str = "") -> list[str]:
    """``sys.modules`` of ``mini-codex -m scripted:…`` when the UI's first frame is done."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    listing = tmp_path / "modules.txt"
    script = tmp_path / "launch.py"
    script.write_text(SCRIPT.format(before=before, out=str(listing)))
    model = tmp_path / "model.jsonl"
    model.write_text('{"output": [{"type": "message", "content": "hi"}]}\n')
    command = (
        f"cd {work} && env MINI_CODEX_HOME={home} TERM=xterm-256color "
        f"{sys.executable} {script} -m scripted:{model}; sleep 30"
    )
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-s", "ui", "-x", "100", "-y", "30", command])
    deadline = time.monotonic() + 60
    screen = ""
    while time.monotonic() < deadline:
        screen = subprocess.run(
            [*tmux, "capture-pane", "-p", "-t", "ui"], capture_output=True, text=True, check=True
        ).stdout
        if "Ask mini-codex" in screen and "approvals " in screen and listing.exists():
            return listing.read_text().split()
        time.sleep(0.1)
    raise AssertionError(f"the UI never showed its composer and an open session:\n{screen}")


def heavy_among(names: list[str]) -> list[str]:
    return sorted(
        name for name in names if any(name == h or name.startswith(h + ".") for h in HEAVY)
    )


def test_the_composer_is_painted_before_anything_heavy_is_imported(
    tmux_socket: str, tmp_path: Path
) -> None:
    names = modules_at_first_frame(tmux_socket, tmp_path)
    assert [name for name in PAINTED if name not in names] == []
    assert heavy_among(names) == []


def test_the_guard_sees_a_heavy_import(tmux_socket: str, tmp_path: Path) -> None:
    names = modules_at_first_frame(tmux_socket, tmp_path, before="import pydantic")
    assert "pydantic" in heavy_among(names)


def test_the_ui_runs_with_the_cyclic_collector(tmux_socket: str, tmp_path: Path) -> None:
    """The collector is off while ``mini-codex`` starts (``cli/signals.pause_collection``) and
    on again while the UI runs (``cli/interactive.run_interactive`` settles the heap)."""
    modules_at_first_frame(tmux_socket, tmp_path)
    assert (tmp_path / "modules.txt.gc").read_text() == "True"
