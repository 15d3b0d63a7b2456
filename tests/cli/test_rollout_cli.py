"""``mini-codex rollout replay|inspect|verify`` on real files: the Codex corpus, hand-built rollouts
and unreadable paths. Most tests drive the typer app in-process (``CliRunner``); one end-to-end
test per command runs the installed ``mini-codex`` script in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.rollout import read_rollout, reconstruct

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rollouts"
CODEX = sorted((FIXTURES / "codex").glob("*.jsonl"))
MINI_CODEX = Path(sys.executable).parent / "mini-codex"

REPLAY_KEYS = [
    "world_state",
    "history",
    "reference_context",
    "previous_model",
    "window",
    "warnings",
    "stats",
]

runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


def non_blank_lines(path: Path) -> int:
    return sum(1 for line in path.read_bytes().splitlines() if line.strip())


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def line(kind: str, payload: Any) -> dict[str, Any]:
    return {"timestamp": "2026-09-01T10:00:00.000Z", "type": kind, "payload": payload}


def meta(**extra: Any) -> dict[str, Any]:
    return line("session_meta", {"id": "01900000-0000-7000-8000-0000000000f1", **extra})


def user(text: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": text}]
    return line("response_item", {"type": "message", "role": "user", "content": content})


def assistant(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text}]
    return line("response_item", {"type": "message", "role": "assistant", "content": content})


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return line("event_msg", {"type": kind, **fields})


def world_state(state: dict[str, Any], *, full: bool) -> dict[str, Any]:
    return line("world_state", {"full": full, "state": state})


def turn_context(model: str = "gpt-test") -> dict[str, Any]:
    return line(
        "turn_context",
        {
            "turn_id": "turn-1",
            "cwd": "/repo",
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write"},
            "model": model,
            "summary": "auto",
        },
    )


def good_turn() -> list[dict[str, Any]]:
    return [
        meta(cwd="/repo", mini_codex_schema=1),
        event("task_started", turn_id="turn-1"),
        user("hi"),
        event("user_message", message="hi"),
        world_state({"env": {"cwd": "/repo"}}, full=True),
        turn_context(),
        assistant("hello"),
        event("task_complete", turn_id="turn-1"),
    ]


# --- the Codex corpus ----------------------------------------------------------------------------


def test_the_codex_corpus_is_present() -> None:
    assert len(CODEX) == 8


@pytest.mark.parametrize("path", CODEX, ids=lambda path: path.name[:40])
def test_replay_json_of_codex_rollout_is_the_reconstruction(path: Path) -> None:
    result = invoke("rollout", "replay", "--json", str(path))

    assert result.exit_code == 0
    assert result.stderr == ""
    output = orjson.loads(result.stdout)
    assert list(output) == REPLAY_KEYS
    assert list(output["window"]) == ["number", "first_id", "previous_id", "current_id"]
    assert list(output["stats"]) == ["lines", "bad_lines", "unknown_items"]
    read = read_rollout(path)
    assert output == reconstruct(read.lines, read.stats).to_json()
    assert output["stats"]["lines"] == non_blank_lines(path)


@pytest.mark.parametrize("path", CODEX, ids=lambda path: path.name[:40])
def test_inspect_of_codex_rollout_shows_every_turn(path: Path) -> None:
    result = invoke("rollout", "inspect", str(path))

    assert result.exit_code == 0
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith("rollout  ")
    assert lines[2].startswith(f"lines    {non_blank_lines(path)} lines · 0 bad")
    assert any(line.startswith("replay   history ") for line in lines)


@pytest.mark.parametrize("path", CODEX, ids=lambda path: path.name[:40])
def test_verify_of_codex_rollout_holds_every_invariant(path: Path) -> None:
    result = invoke("rollout", "verify", str(path))

    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        f"ok: {non_blank_lines(path)} lines, invariants I1 I3 I5 I6 hold\n",
        "",
    )


def test_inspect_of_a_codex_2025_file_derives_turns_from_user_input() -> None:
    path = FIXTURES / "codex" / "codex-0.47.0-2025-10-gpt5-codex-pomodoro-apply-patch.jsonl"

    result = invoke("rollout", "inspect", str(path))

    turns = [line for line in result.stdout.splitlines() if line.startswith("▸ turn")]
    assert [turn.split(" · ")[:2] for turn in turns] == [
        ["▸ turn 1", "user input L3"],
        ["▸ turn 2", "user input L68"],
        ["▸ turn 3", "user input L91"],
    ]


# --- replay ---------------------------------------------------------------------------------------


def test_replay_json_reports_bad_lines_and_warnings(tmp_path: Path) -> None:
    lines = good_turn()
    path = tmp_path / "rollout.jsonl"
    data = b"".join(orjson.dumps(item) + b"\n" for item in lines)
    path.write_bytes(data + b'{"timestamp": "2026-09-01T10:00:00.000Z", "type": "respo')

    result = invoke("rollout", "replay", "--json", str(path))

    assert result.exit_code == 0
    output = orjson.loads(result.stdout)
    assert output["stats"] == {"lines": 9, "bad_lines": 1, "unknown_items": 0}
    assert output["warnings"] == ["1 line(s) could not be decoded and were skipped"]
    assert output["world_state"] == {"env": {"cwd": "/repo"}}
    assert output["previous_model"] == "gpt-test"


def test_replay_summary_names_history_world_state_and_window(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "rollout.jsonl", good_turn())

    result = invoke("rollout", "replay", str(path))

    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[2:12] == [
        "stats              8 lines · 0 bad · 0 of unknown kinds",
        "history            2 items",
        "  00:message/user:hi",
        "  01:message/assistant:hello",
        "world state        1 section",
        "  env",
        "reference context  model gpt-test · cwd /repo · turn turn-1",
        "previous model     gpt-test",
        "window             number 0",
        "warnings           none",
    ]


# --- unreadable inputs ----------------------------------------------------------------------------


def unreadable_cases(tmp_path: Path) -> list[tuple[Path, str]]:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n  \n\n")
    newer = write_lines(tmp_path / "newer.jsonl", [meta(mini_codex_schema=99)])
    missing = tmp_path / "missing.jsonl"
    return [
        (missing, f"error: rollout file not found: {missing}"),
        (empty, f"error: empty session file: {empty}"),
        (blank, f"error: empty session file: {blank}"),
        (tmp_path, f"error: rollout path is a directory, not a file: {tmp_path}"),
        (
            newer,
            f"error: {newer} was written with rollout schema 99, but this mini-codex reads "
            "schemas up to 1; upgrade mini-codex to read it",
        ),
    ]


@pytest.mark.parametrize(("command", "code"), [("replay", 1), ("inspect", 1), ("verify", 2)])
def test_unreadable_rollout_is_one_error_line(tmp_path: Path, command: str, code: int) -> None:
    for path, message in unreadable_cases(tmp_path):
        result = invoke("rollout", command, str(path))

        assert (result.exit_code, result.stdout, result.stderr) == (code, "", message + "\n")


def test_replay_json_of_unreadable_rollout_prints_nothing_on_stdout(tmp_path: Path) -> None:
    result = invoke("rollout", "replay", "--json", str(tmp_path / "nope.jsonl"))

    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.count("\n") == 1


# --- verify ---------------------------------------------------------------------------------------


def test_verify_names_the_first_violating_line(tmp_path: Path) -> None:
    lines = [
        *good_turn(),
        event("task_started", turn_id="turn-2"),
        user("again"),
        event("user_message", message="again"),
        world_state({"env": {"cwd": "/elsewhere"}}, full=True),  # line 12: I5, a second full
        turn_context(),
        assistant("done"),
        line("compacted", {"message": "summary", "replacement_history": []}),
        world_state({"env": {"cwd": "/x"}}, full=False),  # line 16: I3, patch after compaction
        event("task_complete", turn_id="turn-2"),
    ]
    path = write_lines(tmp_path / "rollout.jsonl", lines)

    result = invoke("rollout", "verify", str(path))

    assert result.exit_code == 1
    out = result.stdout.splitlines()
    assert out == [
        f"{path}:12: I5: full world_state while a baseline exists (established after the full "
        "world_state at line 5) and no compaction intervened: a step wrote a full item",
        f"{path}:16: I3: world_state patch without a baseline (no full snapshot since the "
        "compaction at line 15)",
    ]
    assert result.stderr == "2 violation(s) of I3 I5 in 17 lines\n"


def test_verify_catches_turn_context_before_the_world_state(tmp_path: Path) -> None:
    lines = good_turn()
    lines[4], lines[5] = lines[5], lines[4]  # turn_context, then the full world_state: I1
    path = write_lines(tmp_path / "rollout.jsonl", lines)

    result = invoke("rollout", "verify", str(path))

    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == (
        f"{path}:6: I1: full world_state after the turn_context at line 5 of the same context "
        "update: turn_context must come last"
    )


def test_verify_reports_bad_lines_without_failing(tmp_path: Path) -> None:
    lines = good_turn()
    path = tmp_path / "rollout.jsonl"
    encoded = [orjson.dumps(item) for item in lines]
    encoded.insert(3, b"{not json")
    encoded.insert(5, b"")  # blank lines are not counted
    path.write_bytes(b"\n".join(encoded) + b"\n")

    result = invoke("rollout", "verify", str(path))

    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        "ok: 9 lines, invariants I1 I3 I5 I6 hold (1 bad line skipped)\n",
        f"{path}: warning: line 4: not valid JSON, skipped\n",
    )


def test_verify_line_numbers_count_blank_and_bad_lines(tmp_path: Path) -> None:
    encoded = [orjson.dumps(item) for item in good_turn()]
    patch = orjson.dumps(world_state({"env": {"cwd": "/b"}}, full=False))
    encoded[1:1] = [b"", b"garbage"]  # lines 2 and 3
    encoded.insert(4, patch)  # line 5: a patch before any full snapshot
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"\n".join(encoded) + b"\n")

    result = invoke("rollout", "verify", str(path))

    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{path}:5: I3: world_state patch without a baseline (no full snapshot since the start "
        "of the file)"
    ]


# --- inspect --------------------------------------------------------------------------------------


def test_inspect_shows_a_world_state_patch_as_a_diff(tmp_path: Path) -> None:
    lines = [
        *good_turn()[:-1],
        world_state({"env": {"cwd": "/repo/sub", "shell": "zsh"}}, full=False),
        assistant("moved"),
        event("task_complete", turn_id="turn-1"),
    ]
    path = write_lines(tmp_path / "rollout.jsonl", lines)

    result = invoke("rollout", "inspect", str(path))

    assert result.exit_code == 0
    out = result.stdout.splitlines()
    at = out.index("  step 2 · L8")
    assert out[at + 1 : at + 4] == [
        "      L8  world_state      patch: env",
        '                           ~ env.cwd: "/repo" → "/repo/sub"',
        '                           ~ env.shell: (absent) → "zsh"',
    ]


def test_inspect_never_fails_on_garbage_lines(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(
        b'{"timestamp":"2026-09-01T10:00:00.001Z","type":"session_meta","payload":{"id":"t"}}\n'
        b'\x00\xff\n[1,2]\n"text"\n{"type": 3}\n{"type":"world_state","payload":{"full":true,'
        b'"state":[1]}}\n{"type":"event_msg","payload":{"type":"task_started"}}\n'
        b'{"type":"world_state","payload":{"full":false,"state":{"a":1}}}\n'
    )

    result = invoke("rollout", "inspect", "--events", str(path))

    assert result.exit_code == 0
    assert "warnings (7)" in result.stdout


# --- end to end -----------------------------------------------------------------------------------


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MINI_CODEX), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_rollout_commands_end_to_end(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "rollout.jsonl", good_turn())

    replay = run("rollout", "replay", "--json", str(path))
    inspect = run("rollout", "inspect", str(path))
    verify = run("rollout", "verify", str(path))
    missing = run("rollout", "verify", str(tmp_path / "missing.jsonl"))

    assert replay.returncode == 0
    assert orjson.loads(replay.stdout)["history"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "hello"}],
        },
    ]
    assert inspect.returncode == 0
    assert "▸ turn 1 · id turn-1 · task_started L2 · 1 step" in inspect.stdout
    assert (verify.returncode, verify.stdout) == (0, "ok: 8 lines, invariants I1 I3 I5 I6 hold\n")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        2,
        "",
        f"error: rollout file not found: {tmp_path / 'missing.jsonl'}\n",
    )
