"""The issue's scenario through ``mini-codex exec`` has the structure of Codex 0.169's request.

Scenario (``tests/fixtures/codex_skills/scenario.py``): a repo skill ``release-notes``, a user skill
``tidy`` in the tool's home, a ``SKILL.md`` without frontmatter, prompt ``Use $release-notes for
this release.``. Codex's first request was recorded into ``codex-0.169.0-request.json`` (see the
README there); the live test re-runs the real Codex. Compared: the catalog is a developer
fragment just before the permissions fragment; its headings; the roots table and the skill lines
(resolved to absolute paths), in order, without Codex's own bundled system skills (under
``$CODEX_HOME/skills/.system``, not part of mini-codex); the broken skill is not listed; and
the ``<skill>`` user message right after the prompt. The prose is ours, not compared.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "codex_skills"
CODEX = REPO / "node_modules" / ".bin" / "codex"
MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")


def _load(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


fake = _load("fake_openai_server", REPO / "tests" / "models" / "fake_openai_server.py")
scenario = _load("scenario", FIXTURES / "scenario.py")

Structure = dict[str, Any]


def _parts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of every input_text part, in order."""
    return [
        (item["role"], part["text"])
        for item in body["input"]
        if item.get("type") == "message"
        for part in item["content"]
        if part.get("type") == "input_text"
    ]


def structure(body: dict[str, Any], *, system_root: str | None) -> Structure:
    parts = _parts(body)
    (index,) = [i for i, (_, t) in enumerate(parts) if t.startswith("<skills_instructions>")]
    role, text = parts[index]
    assert text.endswith("</skills_instructions>")
    lines = text.removeprefix("<skills_instructions>").split("\n")
    roots: dict[str, str] = {}
    skills: list[tuple[str, str, str]] = []
    for line in lines:
        if match := re.fullmatch(r"- `(r\d+)` = `(.+)`", line):
            roots[match.group(1)] = match.group(2)
        elif match := re.fullmatch(r"- ([^:]+): (.*) \(file: (.+)\)", line):
            alias, _, rest = match.group(3).partition("/")
            path = f"{roots[alias]}/{rest}" if alias in roots else match.group(3)
            skills.append((match.group(1), match.group(2), path))
    if system_root is not None:
        skills = [s for s in skills if not s[2].startswith(system_root + "/")]
        roots = {k: v for k, v in roots.items() if v != system_root}
    prompt_index = parts.index(("user", scenario.PROMPT))
    return {
        "catalog_role": role,
        "next_fragment": parts[index + 1][1].split("\n")[0],
        "headings": [line for line in lines if line.startswith("#")],
        "roots": sorted(roots.values()),
        "skills": skills,
        "after_prompt": parts[prompt_index + 1],
        "skill_messages": sum(t.startswith("<skill>") for _, t in parts),
    }


EXPECTED_HEADINGS = [
    "## Skills",
    "### Skill roots",
    "### Available skills",
    "### How to use skills",
]


def _expected(ws: str, home: str) -> Structure:
    return {
        "catalog_role": "developer",
        "next_fragment": "<permissions instructions>",
        "headings": EXPECTED_HEADINGS,
        "roots": [f"{home}/skills", f"{ws}/.agents/skills"],
        "skills": [
            (
                "release-notes",
                "Write release notes from the git log since the last tag.",
                f"{ws}/.agents/skills/release-notes/SKILL.md",
            ),
            (
                "tidy",
                "Tidy up imports and formatting in the files you touched.",
                f"{home}/skills/tidy/SKILL.md",
            ),
        ],
        "after_prompt": (
            "user",
            f"<skill>\n<name>release-notes</name>\n<path>{ws}/.agents/skills/release-notes/"
            f"SKILL.md</path>\n{scenario.RELEASE_NOTES}\n</skill>",
        ),
        "skill_messages": 1,
    }


def test_the_recorded_codex_request_has_the_expected_structure() -> None:
    body = json.loads((FIXTURES / "codex-0.169.0-request.json").read_text())
    assert structure(body, system_root="/CODEX_HOME/skills/.system") == _expected(
        "/WS", "/CODEX_HOME"
    )


def mini_codex_first_request(tmp_path: Path) -> tuple[dict[str, Any], str, Path, Path]:
    ws, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    for folder in (ws, home, user):
        folder.mkdir()
    scenario.make_workspace(ws)
    scenario.make_user_skill(home)
    message = {"type": "message", "id": "m", "role": "assistant",
               "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
    with fake.serve([fake.sse_reply(fake.responses_events([message]))]) as server:
        (home / "config.toml").write_text(
            f'model = "gpt-5.5"\nmodel_provider = "fake"\n[model_providers.fake]\n'
            f'name = "fake"\nbase_url = "{server.url}"\nwire_api = "responses"\n'
        )
        done = subprocess.run(
            [MINI_CODEX, "exec", "-C", str(ws), "--sandbox", "danger-full-access",
             scenario.PROMPT],
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(user),
                 "MINI_CODEX_HOME": str(home), "OPENAI_API_KEY": "sk-local"},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
    return request.body, done.stdout, ws.resolve(), home.resolve()


def test_mini_codex_exec_gives_the_same_structure(tmp_path: Path) -> None:
    body, stdout, ws, home = mini_codex_first_request(tmp_path)
    assert structure(body, system_root=None) == _expected(str(ws), str(home))
    broken = ws / ".agents" / "skills" / "broken" / "SKILL.md"
    assert f"warning: failed to load skill {broken}: missing YAML frontmatter delimited by ---" in (
        " ".join(stdout.split())
    )


def test_the_real_codex_still_sends_that_structure() -> None:
    if not CODEX.exists():
        pytest.skip("node_modules/.bin/codex is not installed (npm ci)")
    recorder = _load("record_codex_skills", FIXTURES / "record_codex_skills.py")
    body, stderr = recorder.first_request(str(CODEX))
    assert structure(body, system_root="/CODEX_HOME/skills/.system") == _expected(
        "/WS", "/CODEX_HOME"
    )
    assert "failed to load skill /WS/.agents/skills/broken/SKILL.md" in stderr
