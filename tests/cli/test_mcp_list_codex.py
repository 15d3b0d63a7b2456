"""``mini-codex mcp list [--json]`` against what Codex 0.169 prints (the fixture
``tests/fixtures/codex_mcp_list``): the same config and the same live servers (an OAuth-protected
one, a plain HTTP one, a refused port) for ours and, when installed, for the real Codex CLI."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.mcp.oauth_store import OAuthStore

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "codex_mcp_list"


def _recorder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "record_codex_mcp_list", FIXTURE / "record_codex_mcp_list.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


RECORDER = _recorder()


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[int, int]]:
    with RECORDER.running_servers() as ports:
        yield ports


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    """The repository under a path as long as the recorded one (the padding depends on it)."""
    with RECORDER.repo_root() as link:
        yield link


def ours(home: Path, *args: str) -> str:
    result = CliRunner().invoke(
        app, ["mcp", "list", *args], env={"MINI_CODEX_HOME": str(home), "DOCS_KEY": ""}
    )
    assert result.exit_code == 0, result.output
    return result.output


def with_our_keys(listing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Codex's objects plus the keys only mini-codex prints (every server here has defaults)."""
    extra = {"required": False, "enabled_tools": None, "disabled_tools": []}
    return [{**entry, **extra} for entry in listing]


def test_mcp_list_matches_codex(servers: tuple[int, int], root: Path, tmp_path: Path) -> None:
    port, plain = servers
    (tmp_path / "config.toml").write_text(RECORDER.config_text(port, plain, root))
    text = RECORDER.normalize(ours(tmp_path), port, plain, root)
    assert text == (FIXTURE / "list.txt").read_text()
    listed = json.loads(RECORDER.normalize(ours(tmp_path, "--json"), port, plain, root))
    assert listed == with_our_keys(json.loads((FIXTURE / "list.json").read_text()))
    assert RECORDER.normalize(ours(tmp_path, "--json"), port, plain, root).startswith(
        '[\n  {\n    "name"'
    )


def test_the_real_codex_still_prints_the_fixture(
    servers: tuple[int, int], root: Path, tmp_path: Path
) -> None:
    if not RECORDER.CODEX.exists():
        pytest.skip("node_modules is not installed (run `npm ci` at the repository root)")
    port, plain = servers
    (tmp_path / "config.toml").write_text(RECORDER.config_text(port, plain, root))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path)}
    outputs = []
    for args in ([], ["--json"]):
        done = subprocess.run(
            [str(RECORDER.CODEX), "mcp", "list", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        outputs.append(RECORDER.normalize(done.stdout, port, plain, root))
    assert outputs[0] == (FIXTURE / "list.txt").read_text()
    # Codex's `env` map has no fixed key order (a Rust HashMap): compared as JSON.
    assert json.loads(outputs[1]) == json.loads((FIXTURE / "list.json").read_text())


def test_a_stored_login_shows_oauth(servers: tuple[int, int], tmp_path: Path) -> None:
    from mcp.shared.auth import OAuthToken

    port, plain = servers
    (tmp_path / "config.toml").write_text(RECORDER.config_text(port, plain))
    store = OAuthStore(tmp_path, "secure", f"http://127.0.0.1:{port}/mcp")
    anyio.run(store.set_tokens, OAuthToken(access_token="a", token_type="Bearer"))
    rows = {row.split()[0]: row for row in ours(tmp_path).splitlines() if row}
    assert rows["secure"].split("enabled  ")[1].strip() == "OAuth"
    listed = {entry["name"]: entry for entry in json.loads(ours(tmp_path, "--json"))}
    assert listed["secure"]["auth_status"] == "o_auth"
    assert listed["plain"]["auth_status"] == "unsupported"


def test_connect_shows_each_ready_servers_prompts(tmp_path: Path) -> None:
    everything = RECORDER.REPO / "node_modules" / ".bin" / "mcp-server-everything"
    if not everything.exists():
        pytest.skip("node_modules is not installed (run `npm ci` at the repository root)")
    (tmp_path / "config.toml").write_text(
        "[mcp_servers.everything]\n"
        'command = "node"\n'
        f'args = ["{everything}", "stdio"]\n'
        "[mcp_servers.broken]\n"
        f'command = "{sys.executable}"\n'
        'args = ["-c", "raise SystemExit(3)"]\n'
        "startup_timeout_sec = 10\n"
        "[mcp_servers.off]\n"
        'command = "true"\n'
        "enabled = false\n"
    )
    # server-everything's prompts, in the order it lists them.
    expected = [
        {"name": "simple-prompt", "arguments": []},
        {"name": "args-prompt", "arguments": ["city", "state"]},
        {"name": "completable-prompt", "arguments": ["department", "name"]},
        {"name": "resource-prompt", "arguments": ["resourceType", "resourceId"]},
    ]
    listed = {e["name"]: e for e in json.loads(ours(tmp_path, "--json", "--connect"))}
    assert {name: entry["prompts"] for name, entry in listed.items()} == {
        "broken": None,
        "everything": expected,
        "off": None,
    }
    plain = {e["name"]: e for e in json.loads(ours(tmp_path, "--json"))}
    assert all("prompts" not in entry for entry in plain.values())
    lines = ours(tmp_path, "--connect").splitlines()
    header = lines[0]
    assert header.split()[-2:] == ["Prompts", "State"]
    start, end = header.index("Prompts"), header.index("State")
    cells = {line.split()[0]: line[start:end].strip() for line in lines[1:]}
    assert cells == {
        "broken": "-",
        "everything": "simple-prompt, args-prompt, completable-prompt, resource-prompt",
        "off": "-",
    }
    assert "Prompts" not in ours(tmp_path)


def test_connect_adds_each_servers_live_state(servers: tuple[int, int], tmp_path: Path) -> None:
    port, _ = servers
    everything = RECORDER.REPO / "node_modules" / ".bin" / "mcp-server-everything"
    if not everything.exists():
        pytest.skip("node_modules is not installed (run `npm ci` at the repository root)")
    (tmp_path / "config.toml").write_text(
        "[mcp_servers.everything]\n"
        'command = "node"\n'
        f'args = ["{everything}", "stdio"]\n'
        "[mcp_servers.broken]\n"
        f'command = "{sys.executable}"\n'
        'args = ["-c", "raise SystemExit(3)"]\n'
        "startup_timeout_sec = 10\n"
        "[mcp_servers.off]\n"
        'command = "true"\n'
        "enabled = false\n"
        "[mcp_servers.secure]\n"
        f'url = "http://127.0.0.1:{port}/mcp"\n'
    )
    listed = {e["name"]: e for e in json.loads(ours(tmp_path, "--json", "--connect"))}
    states = {name: (entry["state"], entry["error"]) for name, entry in listed.items()}
    error = states["broken"][1]
    assert error
    assert states == {
        "broken": ("failed", error),
        "everything": ("ready", None),
        "off": (None, None),
        "secure": (
            "needs login",
            "MCP server 'secure' needs login: run `mini-codex mcp login secure`",
        ),
    }
    rows = [line.split("  ")[0] for line in ours(tmp_path, "--connect").splitlines()]
    assert rows == ["Name", "broken", "everything", "off", "", "Name", "secure"]
    cells = {
        line.split()[0]: line.rstrip().rsplit("  ", 1)[1].strip()
        for line in ours(tmp_path, "--connect").splitlines()
        if line and not line.startswith("Name")
    }
    assert cells == {
        "broken": f"failed: {error}",
        "everything": "ready",
        "off": "-",
        "secure": "needs login",
    }
