"""A session whose recorded cwd is gone is not resumed in the process's directory: ``resume``
(CLI), the interactive UI's opener and the SDK refuse it with one line naming the directory and
the way to choose another (``--cd`` / ``working_directory=``). The SDK refuses a thread whose
working directory is missing or a file at start, and ``resume_thread(PATH)`` checks the file and
the cwd before copying anything into its home.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mini_codex.cli import interactive
from mini_codex.cli.interactive import UiOptions
from mini_codex.errors import MiniCodexError
from mini_codex.sdk import Codex, CodexError

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
SESSION_ID = "019b0000-0000-7000-8000-0000000000c1"


def _rollout(path: Path, cwd: Path) -> Path:
    meta = {"id": SESSION_ID, "cwd": str(cwd), "timestamp": "2026-01-01T00:00:00Z"}
    line = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": meta}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(line) + "\n")
    return path


def _refusal(cwd: Path, option: str) -> str:
    return (
        f"the session was recorded in {cwd}, which is not a directory any more; "
        f"pass {option} DIR to resume it elsewhere"
    )


def test_resume_of_a_session_whose_cwd_is_gone_is_refused(tmp_path: Path) -> None:
    gone = tmp_path / "deleted-project"
    home = tmp_path / "home"
    _rollout(
        home
        / "sessions"
        / "2026"
        / "01"
        / "01"
        / f"rollout-2026-01-01T00-00-00-{SESSION_ID}.jsonl",
        gone,
    )
    here = tmp_path / "elsewhere"
    here.mkdir()
    env = {**os.environ, "MINI_CODEX_HOME": str(home)}
    for target in (SESSION_ID, "--last"):
        result = subprocess.run(
            [MINI_CODEX, "resume", target, "--model", "scripted:none.jsonl", "go on"],
            cwd=here,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (result.returncode, result.stderr) == (2, f"error: {_refusal(gone, '--cd')}\n")
    assert sorted(p.name for p in here.iterdir()) == []  # nothing ran here


def test_the_ui_refuses_it_too(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    rollout = _rollout(tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl", gone)
    opener = interactive.make_opener(UiOptions(model="scripted:none.jsonl"), tmp_path / "home")

    async def open_it() -> None:
        async with opener(rollout, None, lambda event: None):  # type: ignore[attr-defined]
            raise AssertionError("the session opened")

    with pytest.raises(MiniCodexError) as refused:
        anyio.run(open_it)
    assert str(refused.value) == _refusal(gone, "--cd")


def test_the_sdk_refuses_a_missing_or_file_working_directory_at_start(tmp_path: Path) -> None:
    codex = Codex(home=tmp_path / "home")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    for path, what in ((tmp_path / "nope", "does not exist"), (a_file, "is not a directory")):
        with pytest.raises(CodexError) as refused:
            codex.start_thread(working_directory=path)
        assert str(refused.value) == f"working directory {path} {what}"


def test_the_sdk_resume_refuses_a_gone_cwd_and_copies_nothing_it_refuses(tmp_path: Path) -> None:
    home = tmp_path / "home"
    codex = Codex(home=home, codex_home=tmp_path / "codex-home")
    gone = tmp_path / "gone"
    outside = _rollout(tmp_path / "other" / f"rollout-2026-01-01T00-00-00-{SESSION_ID}.jsonl", gone)
    with pytest.raises(CodexError) as refused:
        codex.resume_thread(str(outside))
    assert str(refused.value) == _refusal(gone, "working_directory=")
    with pytest.raises(CodexError) as not_a_rollout:
        codex.resume_thread("/etc/passwd")
    assert "/etc/passwd" in str(not_a_rollout.value)
    assert not home.exists()  # nothing was copied in
    # With a working directory given, the same file resumes (copied in once it is known good).
    work = tmp_path / "work"
    work.mkdir()
    thread = codex.resume_thread(str(outside), working_directory=work)
    assert thread.rollout_path is not None
    assert thread.rollout_path.is_relative_to(home)
