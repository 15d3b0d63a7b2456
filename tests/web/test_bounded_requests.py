"""``mini-codex ui`` does bounded work per request, whatever the rollout or the URL holds.

A rollout with one 200 MB line and offsets far past the end of a file are answered within a
bounded time and memory (the server's RSS, read from /proc, and the wall time of the requests,
compared with the same requests on the file without the long line); malformed ids, offsets,
numbers and tokens are 4xx JSON errors, never a 500.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from inspector_server import Server, serve, start_server

SESSION_ID = "01900000-0000-7000-8000-0000000000a1"
BIG = 200 * 1024 * 1024


def _rollout(path: Path, long_output: int) -> Path:
    def line(kind: str, payload: dict[str, Any]) -> bytes:
        stamp = "2026-09-01T10:00:00.000Z"
        return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}).encode() + b"\n"

    meta = {"id": SESSION_ID, "timestamp": "2026-09-01T10:00:00Z", "cwd": "/r"}
    meta["mini_codex_schema"] = 1
    message = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    call = {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{}"}
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}
    answer["content"][0]["text"] = "done"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(line("session_meta", meta))
        out.write(line("event_msg", {"type": "task_started", "turn_id": "t1"}))
        out.write(line("response_item", message))
        out.write(line("response_item", call))
        head = b'{"timestamp":"2026-09-01T10:00:00Z","type":"response_item","payload":'
        head += b'{"type":"function_call_output","call_id":"c1","output":"'
        out.write(head)
        block = b"x" * (1 << 20)
        left = long_output
        while left > 0:
            out.write(block[: min(left, len(block))])
            left -= len(block)
        out.write(b'"}}\n')
        out.write(line("response_item", answer))
        out.write(line("event_msg", {"type": "task_complete", "turn_id": "t1"}))
    return path


def _get(server: Server, path: str) -> tuple[int, bytes, dict[str, str]]:
    url = server.url.split("?")[0].rstrip("/") + path
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read(), dict(error.headers)


def _rss_kib(server: Server, field: str = "VmRSS") -> int:
    for row in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if row.startswith(field + ":"):
            return int(row.split()[1])
    raise AssertionError(field)


def _session_requests(server: Server) -> tuple[float, int]:
    """Wall time and the largest body of: the session, each step's world state and request."""
    started = time.perf_counter()
    status, body, _ = _get(server, f"/api/sessions/{SESSION_ID}")
    assert status == 200, body[:300]
    largest = len(body)
    session = json.loads(body)
    for turn in session["turns"]:
        for step in turn["steps"]:
            for part in ("world_state", "request"):
                path = f"/api/sessions/{SESSION_ID}/steps/{step['step_id']}/{part}"
                status, body, _ = _get(server, path)
                assert status == 200, body[:300]
                largest = max(largest, len(body))
    return time.perf_counter() - started, largest


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("bounded")
    name = f"sessions/2026/09/01/rollout-2026-09-01T10-00-00-{SESSION_ID}.jsonl"
    _rollout(root / "big" / name, BIG)
    _rollout(root / "small" / name, 5 * 1024 * 1024)  # windowed too (over 4 MiB), one short line
    return root / "big", root / "small"


def test_a_200_mb_line_is_answered_in_bounded_time_and_memory(homes: tuple[Path, Path]) -> None:
    big, small = homes
    timings = {}
    for label, home in (("small", small), ("big", big)):
        for server in serve(home):
            # Opened directly (as a link does), not through the list: the index is a separate cost.
            _session_requests(server)  # warm: imports, first window
            before = _rss_kib(server)
            elapsed, largest = _session_requests(server)
            for _ in range(3):
                more, largest_again = _session_requests(server)
                elapsed = max(elapsed, more)
                largest = max(largest, largest_again)
            grown = _rss_kib(server, "VmHWM") - before
            timings[label] = (elapsed, largest, grown)
    small_time, _small_body, _ = timings["small"]
    big_time, big_body, big_grown = timings["big"]
    # The 200 MB line is neither read into memory nor sent: a bounded document, a bounded RSS.
    assert big_body < 1024 * 1024, big_body
    assert big_grown < 64 * 1024, f"peak RSS grew by {big_grown} KiB"
    # Its requests cost about what the same file's do with a 5 MB line (ratio, not absolute time).
    assert big_time < max(10 * small_time, 1.0), timings
    for server in serve(big):
        _status, session, _ = _get(server, f"/api/sessions/{SESSION_ID}")
        long_lines = json.loads(session)["long_lines"]
        assert [entry["bytes"] > BIG for entry in long_lines] == [True]
        # The whole line is one request away (streamed; only its head is read here).
        url = server.url.split("?")[0].rstrip("/")
        url += f"/api/sessions/{SESSION_ID}/lines/{long_lines[0]['offset']}"
        with urllib.request.urlopen(url, timeout=60) as response:
            assert response.read(100).startswith(b'{"timestamp"')


def test_offsets_past_the_end_are_clamped_and_cached_once(homes: tuple[Path, Path]) -> None:
    big, _ = homes
    for server in serve(big, "--whole-file-bytes", "0"):
        status, body, _ = _get(server, f"/api/sessions/{SESSION_ID}")
        assert status == 200
        newest = json.loads(body)
        before = _rss_kib(server)
        started = time.perf_counter()
        for far in (10**12, 10**12 + 1, 5 * 10**12, 10**18):
            status, body, _ = _get(server, f"/api/sessions/{SESSION_ID}?before={far}")
            assert status == 200
            assert json.loads(body)["page"] == newest["page"]
            status, body, _ = _get(server, f"/api/sessions/{SESSION_ID}/steps/o{far}/world_state")
            assert status == 404
            assert json.loads(body)["error"].startswith(f"no line at offset {far} ")
        elapsed = time.perf_counter() - started
        assert _rss_kib(server, "VmHWM") - before < 64 * 1024
        one_started = time.perf_counter()
        _get(server, f"/api/sessions/{SESSION_ID}?before=0")
        assert elapsed < max(20 * (time.perf_counter() - one_started), 2.0)


BAD_REQUESTS = [
    ("/api/sessions/**", 400),
    ("/api/sessions/%5B!a%5D", 400),
    (f"/api/sessions/{SESSION_ID}/steps/o%C2%B2/world_state", 400),
    (f"/api/sessions/{SESSION_ID}/steps/o%C2%B2/request", 400),
    (f"/api/sessions/{SESSION_ID}?before=%C2%B2", 400),
    (f"/api/sessions/{SESSION_ID}?before=" + "9" * 5000, 400),
    (f"/api/sessions/{SESSION_ID}?before=-1", 400),
    (f"/api/sessions/{SESSION_ID}/steps/o{'9' * 5000}/world_state", 400),
    (f"/api/sessions/{SESSION_ID}/steps/x1/request", 400),
    (f"/api/sessions/{SESSION_ID}/lines/{'1' * 5000}", 400),
    (f"/api/sessions/{SESSION_ID}/lines/1", 404),
    ("/api/sessions/01900000-0000-7000-8000-00000000ffff", 404),
    ("/api/sessions/%2A/events", 400),
]


@pytest.mark.parametrize(
    ("path", "status"),
    BAD_REQUESTS,
    ids=[p.replace("9" * 5000, "9…").replace("1" * 5000, "1…")[-60:] for p, _ in BAD_REQUESTS],
)
def test_bad_input_is_a_4xx_json_error(
    homes: tuple[Path, Path], path: str, status: int, bad_server: Server
) -> None:
    got, body, headers = _get(bad_server, path)
    assert got == status, body[:300]
    assert headers["content-type"] == "application/json"
    error = json.loads(body)["error"]
    assert isinstance(error, str)
    assert "\n" not in error
    assert len(error) < 300


@pytest.fixture(scope="module")
def bad_server(homes: tuple[Path, Path]) -> Any:
    _, small = homes
    yield from serve(small)


def test_a_non_ascii_token_is_401_and_the_cookie_is_named_after_the_port(
    homes: tuple[Path, Path],
) -> None:
    _, small = homes
    server = start_server(small, "--host", "127.0.0.2")
    try:
        token = server.url.split("?token=")[1]
        port = server.url.split(":")[2].split("/")[0]
        for presented in ("%C3%A9", "%FF" * 40, token[:-1] + "%C3%A9"):
            status, body, _ = _get(server, f"/api/sessions?token={presented}")
            assert (status, json.loads(body)["error"][:12]) == (401, "unauthorized")
        request = urllib.request.Request(
            server.url.split("?")[0] + "api/sessions", headers={"Authorization": "Bearer é"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 401
        refused.value.close()
        status, _, headers = _get(server, f"/?token={token}")
        assert status == 200
        assert headers["set-cookie"] == (
            f"mini_codex_token_{port}={token}; Path=/; HttpOnly; SameSite=Strict"
        )
        # The cookie of this port is accepted; another port's is not.
        for name, expected in ((f"mini_codex_token_{port}", 200), ("mini_codex_token", 401)):
            request = urllib.request.Request(
                server.url.split("?")[0] + "api/sessions", headers={"Cookie": f"{name}={token}"}
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    got = response.status
            except urllib.error.HTTPError as error:
                got = error.code
                error.close()
            assert got == expected, name
    finally:
        server.stop()
