"""Structured skill inputs through the front ends: ``mini-codex exec --skill PATH`` and the SDK's
``{"type": "skill", "name", "path"}`` input part inject the skill without a ``$name`` mention."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from skill_files import write_skill

from mini_codex.protocol import InputText, Message
from mini_codex.sdk import Codex
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")

pytestmark = pytest.mark.anyio


def _skill_texts(items: object) -> list[str]:
    assert isinstance(items, list | tuple)
    return [
        part.text
        for item in items
        if isinstance(item, Message) and item.role == "user"
        for part in item.content
        if isinstance(part, InputText) and part.text.startswith("<skill>")
    ]


async def test_the_sdk_accepts_skill_input_parts(tmp_path: Path) -> None:
    work = tmp_path / "work"
    path = write_skill(work / ".agents" / "skills", "release-notes", "Notes.").resolve()
    model = ScriptedModel([ScriptedResponse([assistant("done")])])
    thread = Codex(home=tmp_path / "home", model_client=model).start_thread(working_directory=work)
    turn = await thread.run(
        [
            {"type": "text", "text": "write the notes"},
            {"type": "skill", "name": "release-notes", "path": str(path)},
        ]
    )
    assert turn.final_response == "done"
    (prompt,) = model.prompts
    assert _skill_texts(prompt.input) == [
        f"<skill>\n<name>release-notes</name>\n<path>{path}</path>\n{path.read_text()}\n</skill>"
    ]


def test_exec_skill_option(tmp_path: Path) -> None:
    work = tmp_path / "work"
    path = write_skill(tmp_path / "home" / "skills", "tidy", "Tidy.").resolve()
    work.mkdir()
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"output": [{"type": "message", "content": "ok"}]}) + "\n")
    trace = tmp_path / "requests.jsonl"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "MINI_CODEX_HOME": str(tmp_path / "home")}  # fmt: skip
    done = subprocess.run(
        [MINI_CODEX, "exec", "-C", str(work), "--model", f"scripted:{script}",
         "--trace-requests", str(trace), "--skill", str(path), "tidy this"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "<name>tidy</name>" in trace.read_text()
    missing = subprocess.run(
        [MINI_CODEX, "exec", "-C", str(work), "--model", f"scripted:{script}",
         "--skill", str(tmp_path / "nope.md"), "tidy this"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert missing.returncode != 0
    assert f"--skill {tmp_path / 'nope.md'}: no such file" in missing.stderr
