"""``mini-codex [PROMPT]``: the group takes a prompt or a command; without a terminal the UI
refuses with one clear line, and ``resume`` keeps its non-interactive behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mini_codex.cli import interactive
from mini_codex.cli.interactive import UiOptions
from mini_codex.cli.main import app


def test_no_terminal_gets_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["--model", "scripted:x.jsonl", "fix the bug"], env={"MINI_CODEX_HOME": str(tmp_path)}
    )
    assert result.exit_code == 2
    assert result.output == (
        "error: the interactive UI needs a terminal; use `mini-codex exec PROMPT` in scripts\n"
    )


def test_a_bad_option_is_refused_before_anything_starts(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["--sandbox", "sideways"], env={"MINI_CODEX_HOME": str(tmp_path)}
    )
    assert result.exit_code == 2
    assert "unknown --sandbox 'sideways'" in result.output


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["hello", "world"], (UiOptions(), "hello world")),
        (["-m", "gpt-x", "do", "it"], (UiOptions(model="gpt-x"), "do it")),
        (
            ["-c", "model=y", "--cd", "/tmp", "-a", "never", "task"],
            (UiOptions(cd=Path("/tmp"), approval="never", overrides=["model=y"]), "task"),
        ),
        ([], (UiOptions(), None)),
        (
            ["-i", "a.png", "--image", "b.jpg", "what", "is", "this"],
            (UiOptions(images=(Path("a.png"), Path("b.jpg"))), "what is this"),
        ),
    ],
)
def test_without_a_command_the_words_are_the_ui_prompt(
    monkeypatch: pytest.MonkeyPatch, args: list[str], expected: tuple[UiOptions, str | None]
) -> None:
    started: list[tuple[UiOptions, str | None]] = []

    def fake_ui(options: UiOptions, *, prompt: str | None = None) -> int:
        started.append((options, prompt))
        return 0

    monkeypatch.setattr(interactive, "run_interactive", fake_ui)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert started == [expected]


def test_a_command_name_is_still_a_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interactive, "run_interactive", lambda *a, **k: pytest.fail("UI started"))
    result = CliRunner().invoke(app, ["execpolicy", "--help"])
    assert result.exit_code == 0
    assert "Check commands against command rules." in result.output


def test_resume_without_a_terminal_keeps_its_old_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"MINI_CODEX_HOME": str(tmp_path)}
    result = runner.invoke(app, ["resume"], env=env)
    assert result.exit_code == 2
    assert result.output == "error: give a SESSION_ID or PATH, or --last\n"


def test_a_bad_image_is_refused_before_the_ui_starts(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not an image")
    env = {"MINI_CODEX_HOME": str(tmp_path)}
    runner = CliRunner()
    missing = runner.invoke(app, ["-i", str(tmp_path / "missing.png"), "look"], env=env)
    text = runner.invoke(app, ["-i", str(tmp_path / "notes.txt")], env=env)
    assert [(missing.exit_code, missing.output), (text.exit_code, text.output)] == [
        (2, f"error: image {tmp_path}/missing.png: No such file or directory\n"),
        (
            2,
            f"error: image {tmp_path}/notes.txt: unsupported format (expected PNG, JPEG, GIF "
            "or WebP)\n",
        ),
    ]


def test_the_ui_refuses_to_resume_a_session_recorded_in_the_root_without_cd(
    tmp_path: Path,
) -> None:
    # The same check as `resume` (cli.run.session_cwd): the UI's picker and `resume --last` on a
    # terminal must not silently make / (or the home directory) the writable root either.
    import json

    import anyio

    from mini_codex.errors import MiniCodexError

    rollout = tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl"
    meta = {"id": "019b0000-0000-7000-8000-000000000000", "cwd": "/", "timestamp": "2026"}
    line = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": meta}
    rollout.write_text(json.dumps(line) + "\n")
    opener = interactive.make_opener(UiOptions(model="scripted:none.jsonl"), tmp_path / "home")

    async def open_it() -> None:
        async with opener(rollout, None, lambda event: None):  # type: ignore[attr-defined]
            raise AssertionError("the session opened")

    with pytest.raises(MiniCodexError) as refused:
        anyio.run(open_it)
    assert str(refused.value) == (
        "the session was recorded in /; resuming there would make it the sandbox's "
        "writable root. Pass --cd DIR (--cd / to confirm)."
    )
