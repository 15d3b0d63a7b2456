"""Hostile input class: binary junk where discovery reads text."""

from __future__ import annotations

import random
from pathlib import Path

from hostile import load, repo, scan


def junk(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def test_a_binary_agents_md_is_decoded_lossily_with_a_warning(tmp_path: Path) -> None:
    root = repo(tmp_path)
    data = b"\x7fELF\x02\x01\x01\x00" + junk(4000, 1)
    (root / "AGENTS.md").write_bytes(data)
    loaded = load(root)
    assert (loaded.text, loaded.warnings) == (
        data.decode("utf-8", errors="replace"),
        (f"AGENTS.md file {root}/AGENTS.md is not valid UTF-8; invalid bytes replaced.",),
    )


def test_patterns_inside_binary_junk_still_apply(tmp_path: Path) -> None:
    root = repo(tmp_path, ["a.log", "b.txt", "c.bin"])
    (root / ".gitignore").write_bytes(junk(5000, 2) + b"\n*.log\n" + junk(5000, 3) + b"\n")
    (root / ".git" / "info" / "exclude").write_bytes(b"\x00\xff\xfe\n*.bin\n\x00" * 100)
    assert scan(root) == (
        [".gitignore", "b.txt"],
        ("ignore file .gitignore: 1 invalid pattern line(s) ignored",),  # one ends with a '\\'
    )
