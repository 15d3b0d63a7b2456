"""``exec --json`` prints the sub-agent tool calls as Codex 0.169 does: the same scenario the
Codex CLI was recorded with (``tests/fixtures/codex_subagents/record.py``, the same scripted
server) gives the same events, ``collab_tool_call`` items included, up to ids and usage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "codex_subagents"
sys.path[:0] = [str(REPO / "tests" / "models"), str(FIXTURES)]

from record import PARENT, Responder  # noqa: E402

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")


def normalized(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Thread ids by order of appearance (``T0`` the parent); the usage totals dropped (Codex made
    one more request: its tools are found through ``tool_search``); receivers sorted."""
    text = json.dumps(events)
    names: dict[str, str] = {}
    for found in json.loads(text):
        for value in _strings(found):
            if len(value) == 36 and value.count("-") == 4 and value not in names:
                names[value] = f"T{len(names)}"
    for real, name in names.items():
        text = text.replace(real, name)
    out = json.loads(text)
    for event in out:
        if event["type"] == "turn.completed":
            event["usage"] = "(usage)"
        item = event.get("item", {})
        if "receiver_thread_ids" in item:  # Codex lists a wait's receivers in HashMap order
            item["receiver_thread_ids"] = sorted(item["receiver_thread_ids"])
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (*_strings(key), *_strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


def test_exec_json_collab_items_match_the_codex_recording(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server = Responder().start()
    try:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            "MINI_CODEX_HOME": str(tmp_path / "home"),
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "sk-local",
        }
        done = subprocess.run(
            [MINI_CODEX, "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access",
             "-c", "features.multi_agent=true", "-C", str(work), PARENT],
            capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    ours = [json.loads(line) for line in done.stdout.splitlines()]
    theirs = [json.loads(line) for line in (FIXTURES / "exec_json.jsonl").read_text().splitlines()]
    assert normalized(ours) == normalized(theirs)
