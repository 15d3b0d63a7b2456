"""The websocket transport (loopback, Origin refused, the token off loopback), the method list
against Codex's schema, and the schema check itself (it rejects what Codex would not send)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_server_flow import MINI_CODEX, provider_config
from app_server_schema import check_message, client_methods
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from mini_codex.app_server.methods import CODEX_METHODS
from mini_codex.app_server.transport import needs_token, parse_listen


def test_the_method_list_is_codex_s() -> None:
    assert client_methods() == CODEX_METHODS


def test_listen_addresses() -> None:
    assert parse_listen("stdio://") is None
    assert parse_listen("ws://127.0.0.1:0") == ("127.0.0.1", 0)
    with pytest.raises(ValueError, match="--listen takes stdio:// or ws://HOST:PORT"):
        parse_listen("http://127.0.0.1:80")
    assert [needs_token(h) for h in ("127.0.0.1", "::1", "localhost", "127.0.0.2", "0.0.0.0")] == [
        False,
        False,
        False,
        True,
        True,
    ]


def test_the_schema_check_rejects_what_codex_would_not_send() -> None:
    methods = {1: "turn/start"}
    good = {"id": 1, "result": {"turn": {"id": "t", "items": [], "status": "inProgress"}}}
    assert check_message(good, methods) == []
    bad_status = {"id": 1, "result": {"turn": {"id": "t", "items": [], "status": "running"}}}
    assert check_message(bad_status, methods) != []
    assert check_message({**good, "jsonrpc": "2.0"}, methods) == [
        "has a `jsonrpc` field (Codex omits it)"
    ]
    missing = {"method": "turn/completed", "params": {"threadId": "x"}}
    assert check_message(missing, {}) != []
    unknown = {"method": "thread/exploded", "params": {}}
    assert check_message(unknown, {}) == ["unknown notification 'thread/exploded'"]


@pytest.fixture
def ws_server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, str | None]]:
    host = getattr(request, "param", "127.0.0.1")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(provider_config("http://127.0.0.1:9/v1"))
    env = {**os.environ, "MINI_CODEX_HOME": str(home)}
    process = subprocess.Popen(
        [MINI_CODEX, "app-server", "--listen", f"ws://{host}:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline().decode()
    found = re.match(r"listening on (ws://\S+)(?: \(token: (\S+)\))?", line)
    assert found, line
    try:
        yield found.group(1), found.group(2)
    finally:
        os.killpg(process.pid, 15)
        assert process.wait(10) == 143  # SIGTERM closes the server as EOF does
        process.stderr.close()


async def _exchange(url: str, headers: dict[str, str] | None = None) -> list[dict[str, object]]:
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"id": 1, "method": "thread/list", "params": {}}))
        first = json.loads(await ws.recv())
        await ws.send(
            json.dumps({"id": 2, "method": "initialize", "params": {"clientInfo": {"name": "ws"}}})
        )
        second = json.loads(await ws.recv())
        await ws.send(json.dumps({"id": 3, "method": "thread/list", "params": {}}))
        third = json.loads(await ws.recv())
        return [first, second, third]


def test_websocket_on_loopback_serves_without_a_token(ws_server: tuple[str, str | None]) -> None:
    url, token = ws_server
    assert token is None
    first, second, third = asyncio.run(_exchange(url))
    assert first == {"id": 1, "error": {"code": -32600, "message": "Not initialized"}}
    assert second["id"] == 2
    assert third == {"id": 3, "result": {"data": [], "nextCursor": None}}


def test_websocket_refuses_an_origin_header(ws_server: tuple[str, str | None]) -> None:
    url, _ = ws_server
    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(_exchange(url, {"Origin": "https://example.test"}))
    assert refused.value.response.status_code == 403


@pytest.mark.parametrize("ws_server", ["127.0.0.2"], indirect=True)
def test_websocket_off_loopback_needs_the_token(ws_server: tuple[str, str | None]) -> None:
    url, token = ws_server
    assert token is not None
    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(_exchange(url))
    assert refused.value.response.status_code == 401
    with pytest.raises(InvalidStatus):
        asyncio.run(_exchange(url, {"Authorization": "Bearer wrong"}))
    results = asyncio.run(_exchange(url, {"Authorization": f"Bearer {token}"}))
    assert results[2] == {"id": 3, "result": {"data": [], "nextCursor": None}}
