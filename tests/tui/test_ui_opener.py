"""The CLI's session opener in the UI (``cli/interactive.py``): the config is read when the first
session opens, after the UI's first frame, so what it has to say shows in the transcript — a
config that cannot be read as an error (the UI stays; ``/new`` reads the config again), an unknown
key as a warning note before the new session."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import wait_for

from mini_codex.cli.interactive import UiOptions, make_opener
from mini_codex.tui.app import MiniCodexApp
from mini_codex.tui.run import build_app, ui_harness

pytestmark = pytest.mark.anyio


def cli_app(tmp_path: Path, config: str) -> tuple[MiniCodexApp, Path]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(config)
    script = tmp_path / "model.jsonl"
    script.write_text('{"output": [{"type": "message", "content": "hi"}]}\n')
    opener = make_opener(UiOptions(model=f"scripted:{script}", cd=work), home)
    return build_app(opener, target=None, home=home), home  # type: ignore[arg-type]


async def test_a_config_that_cannot_be_read_is_an_error_in_the_transcript(tmp_path: Path) -> None:
    app, home = cli_app(tmp_path, "model = [\n")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: any("invalid TOML" in line for line in lines(app)))
        assert app.session is None
        error = next(line for line in lines(app) if "invalid TOML" in line)
        assert f"{home}/config.toml: invalid TOML" in error
        assert "/new starts a new session" in error
        (home / "config.toml").write_text("")
        app.new_session()
        await wait_for(pilot, lambda: app.session is not None)
        assert any(line.startswith("new session ") for line in lines(app))


async def test_an_unknown_config_key_is_a_warning_note(tmp_path: Path) -> None:
    app, _ = cli_app(tmp_path, "not_a_key = 1\n")
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await wait_for(pilot, lambda: any(line.startswith("new session ") for line in lines(app)))
        shown = lines(app)
        warning = "warning: unknown config keys ignored: not_a_key"
        assert warning in shown
        assert shown.index(warning) < next(
            i for i, line in enumerate(shown) if line.startswith("new session ")
        )


def lines(app: MiniCodexApp) -> list[str]:
    return app.transcript_lines()
