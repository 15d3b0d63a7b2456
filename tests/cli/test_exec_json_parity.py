"""``exec --json`` speaks Codex's exec event schema: for the same scripted server scenario, the
stream of mini-codex has the same event and item types, in the same order, with the same field
names as the Codex CLI's recorded output (``tests/fixtures/codex_exec``, Codex 0.169.0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mini_codex.protocol.exec_events import exec_event_from_json

REPO = Path(__file__).parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "codex_exec"
sys.path[:0] = [str(REPO / "tests" / "models"), str(FIXTURES)]

from fake_openai_server import serve  # noqa: E402

from scenarios import SCENARIOS  # noqa: E402

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
CODEX_VERSION = "0.169.0"


def shape(value: Any) -> Any:
    """Types and field names, recursively, without the values (ids, paths, text differ)."""
    if isinstance(value, dict):
        return {key: shape(item) if key != "type" else item for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__ if value is not None else None


def mcp_config(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    server = REPO / "tests" / "mcp" / "servers" / "toy_server.py"
    (home / "config.toml").write_text(
        f'[mcp_servers.toy]\ncommand = "{sys.executable}"\nargs = ["{server}"]\nrequired = true\n'
    )


def run_mini(tmp_path: Path, name: str) -> tuple[int, list[dict[str, Any]], str]:
    scenario = SCENARIOS[name]
    work = tmp_path / "work"
    work.mkdir()
    mcp_config(tmp_path / "home")
    with serve(scenario.responses("mini")) as server:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            "MINI_CODEX_HOME": str(tmp_path / "home"),
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "sk-local",
        }
        done = subprocess.run(
            [MINI_CODEX, "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access",
             "-C", str(work), scenario.prompt],
            capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, lines, str(work)


def recorded(name: str) -> tuple[int, list[dict[str, Any]]]:
    stem = f"codex-{CODEX_VERSION}-{name}"
    text = (FIXTURES / f"{stem}.jsonl").read_text()
    return int((FIXTURES / f"{stem}.exit").read_text()), [json.loads(x) for x in text.splitlines()]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_exec_json_has_codex_event_types_order_and_field_names(tmp_path: Path, name: str) -> None:
    code, ours, _ = run_mini(tmp_path, name)
    codex_code, theirs = recorded(name)
    assert code == codex_code
    assert [shape(line) for line in ours] == [shape(line) for line in theirs]


def test_every_recorded_codex_line_parses_as_our_exec_event_schema() -> None:
    for name in SCENARIOS:
        _, lines = recorded(name)
        for line in lines:
            assert exec_event_from_json(line).to_json() == line


def test_exec_json_values_for_the_everything_scenario(tmp_path: Path) -> None:
    code, ours, work = run_mini(tmp_path, "everything")
    assert code == 0
    _, theirs = recorded("everything")
    ours_by_id = [(line["type"], line.get("item", {}).get("id")) for line in ours]
    theirs_by_id = [(line["type"], line.get("item", {}).get("id")) for line in theirs]
    assert ours_by_id == theirs_by_id
    # Same values wherever they do not depend on the run (paths, ids, the shell wrapper).
    for mine, codex in zip(ours, theirs, strict=True):
        item, codex_item = mine.get("item"), codex.get("item")
        if item is None:
            if mine["type"] != "thread.started":
                assert mine == codex
            continue
        match item["type"]:
            case "file_change":
                assert item["changes"] == [{"path": f"{work}/hello.txt", "kind": "add"}]
                assert item["status"] == codex_item["status"]
            case "command_execution":
                assert item == {**codex_item, "command": "echo hello"}
            case _:
                assert item == codex_item


def test_a_failed_turn_prints_error_then_turn_failed_and_exits_1(tmp_path: Path) -> None:
    code, ours, _ = run_mini(tmp_path, "failure")
    _, theirs = recorded("failure")
    codex_message = theirs[-1]["error"]["message"]
    assert code == 1
    error, failed = ours[-2:]
    assert error["type"] == "error"
    assert error["message"].endswith(f"invalid request (HTTP 400): {codex_message}")
    assert failed == {"type": "turn.failed", "error": {"message": error["message"]}}
