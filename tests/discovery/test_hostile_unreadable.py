"""Hostile input class: files and directories discovery may not read.

Root reads any file whatever its mode, and CI runs as root; so when run as root each check runs
in a child process that dropped ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH`` from its
capability bounding set before ``exec``: it is still uid 0 but the file modes apply to it.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

from hostile import repo

CHECK = """
import json, sys
from mini_codex.discovery import WorkspaceScanner, load_agents_md
root = sys.argv[1]
loaded = load_agents_md(root + "/src")
scanner = WorkspaceScanner(root)
files = sorted(scanner.scan().paths)
print(json.dumps([loaded.text, list(loaded.warnings), files, list(scanner.warnings)]))
"""


_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE = 1
_CAP_DAC_READ_SEARCH = 2


def _drop_file_capabilities() -> None:  # runs in the child, before exec
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_check(root: Path) -> list[object]:
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=_drop_file_capabilities if os.geteuid() == 0 else None,
    )
    assert done.returncode == 0, done.stderr
    result: list[object] = json.loads(done.stdout)
    return result


def test_unreadable_agents_md_and_ignore_files_are_reported(tmp_path: Path) -> None:
    root = repo(tmp_path, ["a.log", "src/main.py"])
    (root / "AGENTS.md").write_text("root rules")
    (root / "src" / "AGENTS.md").write_text("secret rules")
    (root / ".gitignore").write_text("*.log\n")
    (root / "locked").mkdir()
    (root / "locked" / "inside.txt").write_text("x")
    (root / "src" / "AGENTS.md").chmod(0o000)
    (root / ".gitignore").chmod(0o000)
    (root / "locked").chmod(0o000)
    text, warnings, files, scan_warnings = run_check(root)
    (root / "locked").chmod(0o755)
    assert (text, warnings) == (
        "root rules",
        [f"AGENTS.md: cannot read {root}/src/AGENTS.md: Permission denied"],
    )
    assert (files, scan_warnings) == (
        [".gitignore", "AGENTS.md", "a.log", "src/AGENTS.md", "src/main.py"],
        [
            f"cannot read {root}/.gitignore: Permission denied",
            f"cannot list directory '{root}/locked': Permission denied",
        ],
    )
