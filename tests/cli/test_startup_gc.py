"""The cyclic collector while ``mini-codex`` starts (issue 30): off while the command imports its
modules (start-up frees nothing, and its young collections cost 5-10 % of the time to the first
request), back on before the command does its work, whichever command it is (the UI's case is
in ``tests/tui/test_ui_startup_imports.py``: it needs a terminal).

Real subprocesses run the console entry point with an audit hook that notes, for the import of
``mini_codex.config`` (imported by every session command while it starts), whether the collector
was enabled, and an ``atexit`` hook that notes it once the command is over.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import atexit, gc, sys
seen = {}
def hook(event, args):
    if event == "import" and args[0] == "mini_codex.config" and "config" not in seen:
        seen["config"] = gc.isenabled()
sys.addaudithook(hook)
atexit.register(lambda: print(json.dumps({**seen, "exit": gc.isenabled()}), file=sys.stderr))
import json
from mini_codex.cli.entry import main
main()
"""


def probe(tmp_path: Path, *args: str) -> dict[str, bool]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    last = done.stderr.strip().splitlines()[-1]
    result: dict[str, bool] = json.loads(last)
    return result


def test_exec_starts_without_the_collector_and_runs_its_turn_with_it(tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    answer = {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
    script.write_text(json.dumps({"output": [answer]}) + "\n")
    args = ("exec", "--model", f"scripted:{script}", "--json", "--cd", str(tmp_path), "hi")
    assert probe(tmp_path, *args) == {"config": False, "exit": True}


@pytest.mark.parametrize(
    "args",
    [("sessions", "list"), ("compact", "--last")],
    ids=["another-command", "a-failing-command"],
)
def test_every_other_command_runs_with_the_collector(tmp_path: Path, args: tuple[str, ...]) -> None:
    assert probe(tmp_path, *args)["exit"] is True


def test_a_host_importing_the_cli_keeps_its_collector(tmp_path: Path) -> None:
    """Only the ``mini-codex`` process itself tunes the collector (``signals.mark_owner``)."""
    code = (
        "import gc\nfrom mini_codex.cli import main as cli_main\n"
        "from mini_codex.cli.signals import pause_collection, settle_heap\n"
        "pause_collection(); print(gc.isenabled())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
