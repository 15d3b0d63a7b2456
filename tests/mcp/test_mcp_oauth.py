"""OAuth end to end against a local authorization server + protected streamable-HTTP MCP server
(``servers/oauth_server.py``, the ``mcp`` SDK's auth routes on 127.0.0.1): ``mini-codex mcp
login`` (the authorization URL followed over real HTTP, as a browser would, to the loopback
redirect), a call from a session, a refresh after the access token expired, a wrong token (one
clear line, the session goes on without the server), ``mcp logout``.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp_harness import HERE

from mini_codex.config import Config, McpServerConfig
from mini_codex.host import SessionOptions, open_options
from mini_codex.mcp.oauth_store import OAuthStore
from mini_codex.protocol import FunctionCall, FunctionCallOutput, ResponseItemLine
from mini_codex.protocol.session_events import SessionEvent, WarningEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant

SERVER = HERE / "servers" / "oauth_server.py"
MINI_CODEX = Path(sys.executable).parent / "mini-codex"
LIFETIME_S = 3


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def protected() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(port), str(LIFETIME_S)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the OAuth test server did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


def _home(tmp_path: Path, url: str) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[mcp_servers.guarded]\nurl = "{url}"\n')
    return home


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(home)
    return env


def _login(home: Path) -> str:
    """Run ``mcp login``; follow the printed URL like a browser; return its stdout."""
    process = subprocess.Popen(
        [str(MINI_CODEX), "mcp", "login", "guarded", "--no-browser", "--timeout-sec", "60"],
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    url = process.stdout.readline().strip()
    assert first == "Open this URL to log in to MCP server 'guarded':\n"
    # The "browser": the authorization endpoint approves and redirects to the loopback listener.
    page = httpx2.get(url, follow_redirects=True, timeout=30)
    assert page.status_code == 200
    assert page.text == "mini-codex: logged in; you can close this page.\n"
    out, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (0, ""), err
    return out


async def _session(
    home: Path, url: str, script: list[ScriptedResponse]
) -> tuple[list[str], list[str]]:
    """One turn; the call outputs and the warnings."""
    work = home.parent / "work"
    work.mkdir(exist_ok=True)
    warnings: list[str] = []

    def on_event(event: SessionEvent) -> None:
        if isinstance(event, WarningEvent):
            warnings.append(event.message)

    options = SessionOptions(
        cwd=work,
        home=home,
        client=ScriptedModel(script),
        # A long grace: the first step waits for the server to settle, so what it says is seen.
        config=Config(
            mcp_servers={"guarded": McpServerConfig(url=url)},
            mcp_optional_startup_grace_ms=15000,
        ),
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        on_event=on_event,
    )
    async with open_options(options) as session:
        await session.run_turn("call the guarded server")
        path = session.rollout_path
    assert path is not None
    outputs = [
        str(line.payload.output)
        for line in read_rollout(path).lines
        if isinstance(line, ResponseItemLine) and isinstance(line.payload, FunctionCallOutput)
    ]
    return outputs, warnings


def _call(tool: str, call_id: str) -> ScriptedResponse:
    return ScriptedResponse(
        [FunctionCall(name=tool, namespace="mcp__guarded", arguments="{}", call_id=call_id)]
    )


def test_login_call_refresh_wrong_token_and_logout(protected: str, tmp_path: Path) -> None:
    home = _home(tmp_path, protected)
    out = _login(home)
    store = OAuthStore(home, "guarded", protected)
    assert out.endswith(f"Logged in to MCP server 'guarded' (tokens in {store.path})\n")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    stored = json.loads(store.path.read_text())
    assert set(stored["tokens"]) >= {"access_token", "refresh_token", "expires_in"}
    first_token = stored["tokens"]["access_token"]

    # A call with the stored token.
    outputs, warnings = anyio.run(
        _session, home, protected, [_call("whoami", "c1"), ScriptedResponse([assistant("ok")])]
    )
    assert (outputs, warnings) == (['{"result":"authorized"}'], [])

    # After the access token expired, the session refreshes it (and stores the new one).
    time.sleep(LIFETIME_S + 0.5)
    outputs, warnings = anyio.run(
        _session, home, protected, [_call("stats", "c2"), ScriptedResponse([assistant("ok")])]
    )
    assert warnings == []
    assert json.loads(outputs[0]) == {"authorization_code": 1, "refresh_token": 1}
    assert json.loads(store.path.read_text())["tokens"]["access_token"] != first_token

    # A wrong token (and no refresh token): one clear line, the session goes on without it.
    broken = json.loads(store.path.read_text())
    broken["tokens"] = {"access_token": "wrong", "token_type": "Bearer"}
    broken["expires_at"] = None
    store.path.write_text(json.dumps(broken))
    outputs, warnings = anyio.run(
        _session, home, protected, [_call("whoami", "c3"), ScriptedResponse([assistant("went on")])]
    )
    hint = (
        "MCP server 'guarded' rejected its login (the token is wrong, expired or revoked): "
        "run `mini-codex mcp login guarded`"
    )
    assert warnings == [hint]
    assert outputs == [hint]  # the model is told why the tool is missing

    # Status shows it; logout removes the tokens; without them the server needs login.
    status = subprocess.run(
        [str(MINI_CODEX), "mcp", "status", "--json"],
        env=_env(home), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert status.returncode == 0, status.stderr
    [row] = json.loads(status.stdout)
    assert (row["status"], row["error"]) == ("needs login", hint)
    done = subprocess.run(
        [str(MINI_CODEX), "mcp", "logout", "guarded"],
        env=_env(home), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "Logged out of MCP server 'guarded'\n")
    assert not store.path.exists()
    outputs, warnings = anyio.run(
        _session,
        home,
        protected,
        [_call("whoami", "c4"), ScriptedResponse([assistant("still fine")])],
    )
    needs = "MCP server 'guarded' needs login: run `mini-codex mcp login guarded`"
    assert (outputs, warnings) == ([needs], [needs])
