"""Hostile input class: file and directory names that are not UTF-8."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hostile import load, repo, scan

from mini_codex.discovery.safe_read import display_path

BAD = os.fsdecode(b"caf\xe9")  # Latin-1 bytes: a surrogate escape in Python


def test_agents_md_under_a_non_utf8_directory_is_loaded(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cwd = root / BAD
    cwd.mkdir()
    (cwd / "AGENTS.md").write_text("rules here")
    os.mkfifo(cwd / "AGENTS.override.md")
    loaded = load(cwd, [cwd / "AGENTS.override.md"])
    assert (loaded.text, loaded.sources) == ("rules here", (f"{cwd}/AGENTS.md",))
    [warning] = loaded.warnings
    assert (
        display_path(warning)
        == f"AGENTS.md file {root}/caf\\xe9/AGENTS.override.md is a FIFO; skipped"
    )
    json.dumps(display_path(warning)).encode("utf-8")  # safe to show the model and to record


def test_non_utf8_names_are_skipped_with_an_encodable_warning(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / BAD).write_text("x")
    (root / ".gitignore").write_bytes(b"caf\xe9\n*.log\n")
    files, warnings = scan(root)
    assert files == [".gitignore", "README.md", "src/main.py"]
    assert [display_path(w) for w in warnings] == [
        "skipped a name that is not valid UTF-8: 'caf\\udce9'"
    ]
