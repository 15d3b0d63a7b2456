"""The inspector's JSON API over the golden corpus and a scripted session (real server, real files).

* Per step, the world state the API reports equals what replay reconstructs from the lines
  recorded before that step's request, for every readable file of the corpus (Codex CLI files,
  compactions, checkpoints, rollbacks, patches without a baseline).
* For a scripted ``mini-codex exec`` and a ``resume --last`` of it, both with
  ``--trace-requests``, the request the API rebuilds from the rollout equals the traced request
  byte for byte (input and tools), for all five requests of the two turns.
* Loopback binds serve without a token; any other bind answers 401 without it.
"""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from inspector_server import (
    FIXTURES,
    Server,
    install,
    resume_scripted_session,
    run_scripted_session,
    serve,
)
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.errors import MiniCodexError
from mini_codex.rollout.replay import reconstruct
from mini_codex.web.auth import needs_token
from mini_codex.web.diff import diff_states
from mini_codex.web.inspector import load_file_view, request_document, world_state_document

NO_STEPS = {"patch_without_full.jsonl"}
"""Files without model output (no request was made)."""
CORPUS = sorted(
    path
    for folder in ("minimal", "features", "codex")
    for path in (FIXTURES / folder).glob("*.jsonl")
) + [FIXTURES / "negative" / name for name in ("patch_without_full.jsonl", "bad_lines.jsonl")]


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_each_step_shows_the_world_state_replay_reconstructs_before_its_request(
    path: Path,
) -> None:
    loaded = load_file_view(path)
    lines = loaded.window.lines
    steps = list(loaded.view.steps.values())
    assert bool(steps) == (path.name not in NO_STEPS)
    previous = None
    for step in steps:
        expected = reconstruct(lines[: step.request_index]).world_state
        document = world_state_document(step)
        assert document == {
            "step_id": step.step_id,
            "world_state": expected,
            "previous": previous,
            "diff": diff_states(previous, expected),
        }
        previous = expected
        request = request_document(loaded, step)
        assert request["input"] == [
            item.to_json() for item in _normalized(reconstruct(lines[: step.request_index]))
        ]


def _normalized(result: object) -> list:  # type: ignore[type-arg]
    from mini_codex.context.normalize import normalize_history

    return normalize_history(list(result.history))  # type: ignore[attr-defined]


def test_rollbacks_and_compactions_are_reported() -> None:
    rollback = load_file_view(FIXTURES / "features" / "rollback.jsonl").view.to_json()
    assert rollback["rollbacks"] == [{"line": 22, "offset": 3485, "num_turns": 2, "turns": [2, 3]}]
    assert [(turn["rolled_back"], turn["rolled_back_at"]) for turn in rollback["turns"]] == [
        (False, None),
        (True, 22),
        (True, 22),
        (False, None),
    ]
    checkpoint = load_file_view(FIXTURES / "features" / "checkpoint.jsonl").view.to_json()
    assert [c["line"] for c in checkpoint["checkpoints"]] == [9]
    compaction = load_file_view(FIXTURES / "features" / "compaction_window.jsonl").view.to_json()
    assert compaction["compactions"] == [
        {"line": 8, "offset": 1312, "history_items": 2, "summary": "", "step_index": 1}
    ]
    flagged = load_file_view(FIXTURES / "negative" / "patch_without_full.jsonl").view
    assert any("without a full snapshot" in warning for warning in flagged.warnings)


def test_diff_rows_name_each_changed_key() -> None:
    before = {"env": {"cwd": "/a", "shell": "bash"}, "gone": 1}
    after = {"env": {"cwd": "/b", "shell": "bash"}, "new": [1]}
    assert diff_states(before, after) == [
        {"op": "remove", "path": ["gone"], "before": 1},
        {"op": "change", "path": ["env", "cwd"], "before": "/a", "after": "/b"},
        {"op": "add", "path": ["new"], "after": [1]},
    ]
    assert diff_states(None, None) == []


# --- a scripted session, served ------------------------------------------------------------------


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, list[dict]]]:  # type: ignore[type-arg]
    root = tmp_path_factory.mktemp("scripted")
    home, traced = run_scripted_session(root)
    traced += resume_scripted_session(root, home)
    yield from ((server, traced) for server in serve(home))


def test_the_rebuilt_request_of_every_step_equals_the_traced_request(
    scripted: tuple[Server, list[dict]],  # type: ignore[type-arg]
) -> None:
    server, traced = scripted
    status, sessions = server.get("/api/sessions")
    assert status == 200
    assert [s["turns"] for s in sessions] == [2]
    session_id = sessions[0]["id"]
    status, session = server.get(f"/api/sessions/{session_id}")
    assert status == 200
    steps = [step for turn in session["turns"] for step in turn["steps"]]
    assert [step["sequence"] for step in steps] == [1, 2, 3, 1, 2]
    # Two turns (exec, then resume --last appending to the same rollout), five requests.
    assert [trace["step_sequence"] for trace in traced] == [1, 2, 3, 1, 2]
    for step, trace in zip(steps, traced, strict=True):
        status, request = server.get(f"/api/sessions/{session_id}/steps/{step['step_id']}/request")
        assert status == 200
        assert orjson.dumps(request["input"]) == orjson.dumps(trace["input"])
        assert orjson.dumps(request["tools"]) == orjson.dumps(trace["tools"])
        assert request["model"] == trace["model"]
        assert request["tools_source"] == "rebuilt"
    # The apply_patch call and its output are on step 1; the new file reaches step 2's world state.
    usage = [step["token_usage"] and step["token_usage"]["total_tokens"] for step in steps]
    assert usage == [1240, 1375, 1432, None, None]  # the resume script reports no usage
    assert [call["name"] for call in steps[0]["tool_calls"]] == ["apply_patch"]
    assert steps[0]["tool_calls"][0]["output"]
    status, world = server.get(
        f"/api/sessions/{session_id}/steps/{steps[1]['step_id']}/world_state"
    )
    assert status == 200
    assert [(row["op"], row["path"]) for row in world["diff"]] == [
        ("change", ["workspace", "count"]),
        ("change", ["workspace", "digest"]),
        ("add", ["workspace", "files", "hello.txt"]),
    ]
    assert world["world_state"]["workspace"]["files"] == {"hello.txt": 1}
    assert steps[1]["world_state_change"] == [
        {"line": 14, "cause": "patch", "sections": ["workspace"]}
    ]
    rollout = Path(session["path"]).read_bytes()
    line_13 = sum(len(line) for line in rollout.splitlines(keepends=True)[:12])
    assert steps[1]["items"][0] == {
        "line": 13,
        "offset": line_13,
        "kind": "message",
        "role": "user",
        "text": "<workspace_files>\nAdded files:\nhello.txt\n</workspace_files>",
    }
    # The file the resumed turn's shell call created is new in its next request's world state.
    status, world = server.get(
        f"/api/sessions/{session_id}/steps/{steps[4]['step_id']}/world_state"
    )
    assert [(row["op"], row["path"]) for row in world["diff"]] == [
        ("change", ["workspace", "count"]),
        ("change", ["workspace", "digest"]),
        ("add", ["workspace", "files", "two"]),
    ]
    assert server.get("/api/sessions/nope")[0] == 404
    assert server.get(f"/api/sessions/{session_id}/steps/o1/request")[0] == 404


def test_the_token_rule() -> None:
    assert [needs_token(h) for h in ("127.0.0.1", "localhost", "::1")] == [False] * 3
    assert [needs_token(h) for h in ("127.0.0.2", "0.0.0.0", "192.168.1.4")] == [True] * 3


def test_a_non_loopback_bind_refuses_requests_without_the_token(tmp_path: Path) -> None:
    install(tmp_path / "home", FIXTURES / "minimal" / "single_turn.jsonl")
    for server in serve(tmp_path / "home", "--host", "127.0.0.2"):
        assert server.url.startswith("http://127.0.0.2:")
        token = server.url.split("?token=")[1]
        assert len(token) >= 24
        status, body = server.get("/api/sessions")
        assert (status, body["error"].split(":")[0]) == (401, "unauthorized")
        assert server.get("/api/sessions", token="wrong")[0] == 401
        status, sessions = server.get("/api/sessions", token=token)
        assert (status, len(sessions)) == (200, 1)


@pytest.mark.parametrize("name", ["checkpoint.jsonl", "compaction_window.jsonl"])
def test_a_large_file_is_read_in_windows_that_start_at_a_checkpoint(name: str) -> None:
    path = FIXTURES / "features" / name
    data = path.read_bytes()
    starts = [0, *[index + 1 for index, byte in enumerate(data) if byte == ord("\n")][:-1]]
    marker = next(
        start for start in reversed(starts) if b'"type":"compacted"' in data[start : start + 80]
    )
    whole = load_file_view(path)
    newest = load_file_view(path, whole_limit=0)
    older = load_file_view(path, before=newest.window.start, whole_limit=0)
    assert (newest.window.start, newest.window.previous, newest.window.end) == (
        marker,
        0,
        len(data),
    )
    assert (older.window.start, older.window.previous, older.window.end) == (0, None, marker)
    assert newest.view.meta == whole.view.meta
    all_steps = list(whole.view.steps.values())
    for part, keep in ((newest, lambda o: o >= marker), (older, lambda o: o < marker)):
        expected = [step for step in all_steps if keep(step.ref.offset)]
        steps = list(part.view.steps.values())
        assert [step.step_id for step in steps] == [step.step_id for step in expected]
        assert steps
        for step, reference in zip(steps, expected, strict=True):
            assert step.ref == reference.ref  # the same line numbers as a whole-file read
            assert step.world_state == reference.world_state
            assert request_document(part, step) == request_document(whole, reference)
            at = load_file_view(path, at=step.ref.offset, whole_limit=0)
            assert at.window.start == part.window.start


def test_sessions_name_their_model_and_a_foreign_host_header_is_refused(
    scripted: tuple[Server, list[dict]],  # type: ignore[type-arg]
) -> None:
    server, _ = scripted
    status, sessions = server.get("/api/sessions")
    assert (status, [s["model"] for s in sessions]) == (200, ["scripted"])
    assert [s["first_prompt"] for s in sessions] == ["greet me"]
    # A page that rebinds its DNS name to 127.0.0.1 still sends its own Host: refused.
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.request("GET", "/api/sessions", headers={"Host": f"evil.example:{port}"})
    response = connection.getresponse()
    assert (response.status, json.loads(response.read())) == (
        403,
        {"error": "forbidden: not a loopback Host"},
    )
    connection.close()


def test_bad_invocations_get_one_error_line(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = CliRunner().invoke(app, ["ui", "--home", str(missing)])
    assert (result.exit_code, result.output) == (1, f"error: home directory not found: {missing}\n")
    result = CliRunner().invoke(
        app, ["rollout", "inspect", str(missing / "r.jsonl"), "--html", str(tmp_path / "o.html")]
    )
    assert result.exit_code == 1
    assert result.output.startswith("error: ")
    assert result.output.count("\n") == 1
    assert not (tmp_path / "o.html").exists()


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES / "features" / "rollback.jsonl",
        FIXTURES / "features" / "compaction_window.jsonl",
        FIXTURES / "features" / "checkpoint.jsonl",
        FIXTURES
        / "codex"
        / "codex-exec-0.169.0-2026-11-local-fake-server-exec-command-20-steps.jsonl",
    ],
    ids=lambda path: path.name,
)
def test_a_growing_file_shows_replayed_world_states_at_every_length(
    path: Path, tmp_path: Path
) -> None:
    """A live file is read at any length (each prefix of lines): the law still holds."""
    lines = path.read_bytes().splitlines(keepends=True)
    growing = tmp_path / path.name
    seen: dict[str, object] = {}
    for length in range(1, len(lines) + 1):
        growing.write_bytes(b"".join(lines[:length]))
        loaded = load_file_view(growing)
        for step in loaded.view.steps.values():
            expected = reconstruct(loaded.window.lines[: step.request_index]).world_state
            assert step.world_state == expected
            seen[step.step_id] = step.world_state
    final = load_file_view(path).view.steps
    assert sorted(seen) == sorted(final)


def test_a_foreign_home_is_served_read_only(tmp_path: Path) -> None:
    """``--home`` another home: its files are never written (the index lives in our home)."""
    other = tmp_path / "codex-home"
    installed = [
        install(other, path)
        for path in sorted((FIXTURES / "codex").glob("*.jsonl"))
        if path.name.startswith("codex-exec-0.169")
    ]
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in installed}
    listing = sorted(p.relative_to(other) for p in other.rglob("*"))
    (tmp_path / "own").mkdir()
    own_env_home = tmp_path / "own"
    for server in serve(own_env_home, "--home", str(other)):
        status, sessions = server.get("/api/sessions")
        assert (status, len(sessions)) == (200, 1)
        session_id = sessions[0]["id"]
        status, session = server.get(f"/api/sessions/{session_id}")
        assert status == 200
        for step in [s for turn in session["turns"] for s in turn["steps"]][:3]:
            for what in ("world_state", "request"):
                path = f"/api/sessions/{session_id}/steps/{step['step_id']}/{what}"
                assert server.get(path)[0] == 200
    assert sorted(p.relative_to(other) for p in other.rglob("*")) == listing
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in installed} == before
    assert list((own_env_home / "indexes").glob("*.sqlite")) != []


def test_the_event_stream_reports_growth(tmp_path: Path) -> None:
    home = tmp_path / "home"
    target = install(home, FIXTURES / "minimal" / "single_turn.jsonl")
    text = target.read_bytes()
    lines = text.splitlines(keepends=True)
    target.write_bytes(b"".join(lines[:-2]))
    for server in serve(home):
        session_id = server.get("/api/sessions")[1][0]["id"]
        host, port = server.url.removeprefix("http://").rstrip("/").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("GET", f"/api/sessions/{session_id}/events")
        response = connection.getresponse()
        assert (response.status, response.getheader("content-type")) == (
            200,
            "text/event-stream; charset=utf-8",
        )

        assert _next_event(response) == {"size": len(b"".join(lines[:-2]))}
        with target.open("ab") as handle:
            handle.write(b"".join(lines[-2:]))
        assert _next_event(response) == {"size": len(text)}
        connection.close()


def _next_event(response: http.client.HTTPResponse) -> object:
    while True:
        line = response.readline().decode()
        if line.startswith("data: "):
            return json.loads(line[6:])


def test_a_file_that_is_not_a_rollout_is_refused_with_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    target = install(home, FIXTURES / "minimal" / "single_turn.jsonl")
    target.write_text("# just notes\nnot json\n")
    with pytest.raises(MiniCodexError, match=r"not a rollout"):
        load_file_view(target)
    fifo = tmp_path / "rollout-fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(MiniCodexError, match=r"rollout-fifo\.jsonl"):
        load_file_view(fifo)


def test_a_compressed_rollout_shows_the_same_steps(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    plain = FIXTURES / "features" / "rollback.jsonl"
    packed = tmp_path / "rollout-x.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    expected = load_file_view(plain)
    loaded = load_file_view(packed)
    assert [
        (step.ref.line, step.world_state, request_document(loaded, step)["input"])
        for step in loaded.view.steps.values()
    ] == [
        (step.ref.line, step.world_state, request_document(expected, step)["input"])
        for step in expected.view.steps.values()
    ]
    assert loaded.window.size == packed.stat().st_size
