"""The README's SDK example runs offline, as written, with the scripted demo model."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def sdk_example() -> str:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Automation", 1)[1]
    (block,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], flags=re.DOTALL)
    return block


def test_readme_sdk_example_runs_offline() -> None:
    done = subprocess.run(
        [sys.executable, "-c", sdk_example()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    assert (done.returncode, done.stderr) == (0, "")
    final, kinds, failed = done.stdout.splitlines()
    assert final == "Created hello.py and ran it: it prints a greeting with the Python version."
    assert kinds == (
        "['agent_message', 'file_change', 'command_execution', 'agent_message'] "
        "input_tokens=0 cached_input_tokens=0 cache_write_input_tokens=0 output_tokens=0 "
        "reasoning_output_tokens=0"
    )
    assert failed.startswith("failed: ")
    assert failed.endswith(
        "scripted model has no response left for request #4 (script has 3 responses)"
    )
