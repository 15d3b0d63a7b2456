"""The CLI freezes the collector's view of the heap only when it owns the process.

``mini-codex`` (``entry.main``) moves the import-time objects out of the cyclic collector's reach
once the provider is loaded, and everything at exit (issue 13: full collections walking them cost
a resumed session's first turn and the exit). A host or a test that runs the typer app in-process
keeps its collector as it was.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from mini_codex.cli.main import app

SCRIPT = [{"output": [{"type": "message", "content": "hi"}]}]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    return {**env, "MINI_CODEX_HOME": str(home)}


def test_an_in_process_run_leaves_the_collector_alone(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(line) + "\n" for line in SCRIPT))
    before = gc.get_freeze_count()
    result = CliRunner().invoke(
        app,
        ["exec", "--model", f"scripted:{script}", "--cd", str(tmp_path), "say hi"],
        env=_env(tmp_path / "home"),
    )
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before


def test_the_command_freezes_its_import_time_objects(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(line) + "\n" for line in SCRIPT))
    probe = (
        "import gc, sys\n"
        "import mini_codex.cli.run as run\n"
        "settle = run.settle_heap\n"
        "def spy():\n"
        "    settle()\n"
        "    sys.stderr.write(f'frozen {gc.get_freeze_count()}\\n')\n"
        "run.settle_heap = spy\n"
        "from mini_codex.cli.entry import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "exec", "--model", f"scripted:{script}", "say hi"],
        cwd=tmp_path,
        env=_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    frozen = [line for line in done.stderr.splitlines() if line.startswith("frozen ")]
    assert len(frozen) == 1
    assert int(frozen[0].split()[1]) > 10_000
