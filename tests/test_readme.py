"""The README's quick start is exactly two command lines, and the main one works offline."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def quick_start_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_quick_start_has_exactly_two_commands_a_main_job_and_the_tests() -> None:
    main, tests = quick_start_commands()
    assert main.startswith("pip install uv && uv run mini-codex exec --model scripted:")
    assert tests == "pip install uv && uv run pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines()


def test_quick_start_main_command_runs_the_demo_offline(tmp_path: Path) -> None:
    main, _ = quick_start_commands()
    command = main.removeprefix("pip install uv && ")  # uv is already here
    env = {**os.environ, "MINI_CODEX_HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
    env.pop("OPENAI_API_KEY", None)
    result = subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert "hello from mini-codex on Python" in result.stdout
    (rollout,) = (tmp_path / "home" / "sessions").rglob("rollout-*.jsonl")
    assert f"rollout: {rollout}" in result.stdout
