"""``mini-codex compact [--last | SESSION_ID | PATH]``: manual compaction of a recorded session,
end to end with scripted models (real processes, files and rollouts)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import get_args

from test_exec_cli import clean_env, json_lines, mini_codex, write_script

from mini_codex.context.compaction import SUMMARY_PREFIX
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.rollout.resume import load_resume_state


def recorded_session(tmp_path: Path, env: dict[str, str], work: Path) -> Path:
    """``exec "task one"`` in ``work`` (answer "hi"); returns its rollout."""
    work.mkdir()
    first = write_script(
        tmp_path / "first.jsonl", [{"output": [{"type": "message", "content": "hi"}]}]
    )
    result = mini_codex(
        ["exec", "--model", f"scripted:{first}", "--cd", str(work), "task one"], env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    (path,) = (tmp_path / "home" / "sessions").rglob("*.jsonl")
    return path


def test_compact_summarizes_a_session_and_the_next_resume_continues_from_the_summary(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(tmp_path / "home")
    first = write_script(
        tmp_path / "first.jsonl", [{"output": [{"type": "message", "content": "hi"}]}]
    )
    result = mini_codex(
        [
            "exec",
            "--model",
            f"scripted:{first}",
            "--json-events=mini-codex",
            "--cd",
            str(work),
            "task one",
        ],
        env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    path = Path(json_lines(result.stdout)[0]["rollout_path"])

    summarizer = write_script(
        tmp_path / "summary.jsonl", [{"output": [{"type": "message", "content": "did task one"}]}]
    )
    result = mini_codex(
        ["compact", "--last", "--model", f"scripted:{summarizer}", "--cd", str(work)],
        env,
        cwd=tmp_path,
    )
    assert (result.returncode, result.stderr) == (0, "")
    notices = [line for line in result.stdout.splitlines() if "context compacted" in line]
    assert len(notices) == 1
    assert notices[0].startswith("context compacted (manual): ")
    assert "window 1" in notices[0]

    state = load_resume_state(path)
    assert [item.to_json()["content"][0]["text"] for item in state.history] == [
        "task one",
        f"{SUMMARY_PREFIX}\ndid task one",
    ]
    assert state.reference_context is None  # the next turn re-injects the full context
    assert state.window.number == 1
    rollout = read_rollout(path)
    assert check_rollout(rollout.lines, line_numbers=rollout.line_numbers).violations == []
    verify = mini_codex(["rollout", "verify", str(path)], env, cwd=tmp_path)
    assert verify.returncode == 0
    assert verify.stdout.endswith("hold; 1 compaction(s)\n")
    inspect = mini_codex(["rollout", "inspect", str(path)], env, cwd=tmp_path)
    assert "summary: did task one" in inspect.stdout
    # The compaction task is shown and counted as a compaction, not as a turn.
    assert " · 1 turn · 1 manual compaction\n" in inspect.stdout
    headers = [line.split(" · ")[0] for line in inspect.stdout.splitlines() if line[:1] == "▸"]
    assert headers == ["▸ turn 1", "▸ compaction (no user input)"]
    assert "  summary request · L" in inspect.stdout

    replay = mini_codex(["rollout", "replay", "--json", str(path)], env, cwd=tmp_path)
    replayed = json.loads(replay.stdout)["history"]

    resume = write_script(
        tmp_path / "resume.jsonl", [{"output": [{"type": "message", "content": "ok"}]}]
    )
    trace = tmp_path / "trace.jsonl"
    result = mini_codex(
        [
            "resume",
            "--last",
            "--model",
            f"scripted:{resume}",
            "--cd",
            str(work),
            "--trace-requests",
            str(trace),
            "task two",
        ],
        env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    (request,) = json_lines(trace.read_text())
    texts = [item["content"][0]["text"][:20] for item in request["input"]]
    assert texts[:2] == ["task one", SUMMARY_PREFIX[:20]]
    assert texts[-1] == "task two"
    assert len(texts) == 5  # the full initial context (2 messages) comes back before the input
    # `rollout replay --json` of the compacted file == the request minus the new turn's items.
    assert replayed == request["input"][:2]


def test_compact_refuses_bad_arguments_and_reports_a_failed_summary(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    result = mini_codex(["compact"], env, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (
        2,
        "error: give a SESSION_ID or PATH, or --last\n",
    )
    result = mini_codex(["compact", "nope"], env, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (
        2,
        "error: no session or rollout file matches 'nope'\n",
    )

    work = tmp_path / "work"
    path = recorded_session(tmp_path, env, work)
    before = load_resume_state(path).history
    failing = write_script(
        tmp_path / "fail.jsonl", [{"error": {"kind": "invalid_request", "message": "no"}}]
    )
    result = mini_codex(
        ["compact", str(path), "--model", f"scripted:{failing}", "--cd", str(work)],
        env,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "compaction failed: no" in result.stdout
    assert list(load_resume_state(path).history) == list(before)
    assert json.loads(path.read_text().splitlines()[-1])["payload"]["type"] == "task_complete"


def test_compact_takes_the_options_of_resume() -> None:
    """One declaration (``SessionArgs``): compact has every parameter of resume but the prompt."""
    from mini_codex.cli.compact_cmd import compact_command
    from mini_codex.cli.resume_cmd import resume_command

    resume = inspect.signature(resume_command).parameters
    compact = inspect.signature(compact_command).parameters
    assert [name for name in resume if name != "prompt"] == list(compact)
    for name, parameter in compact.items():
        assert parameter.default == resume[name].default
        (info,) = get_args(parameter.annotation)[1:]
        (resume_info,) = get_args(resume[name].annotation)[1:]
        assert info.param_decls == resume_info.param_decls


def test_compact_writes_the_summary_with_o_and_refuses_turn_only_options(tmp_path: Path) -> None:
    work = tmp_path / "work"
    env = clean_env(tmp_path / "home")
    path = recorded_session(tmp_path, env, work)
    before = path.read_bytes()
    image = tmp_path / "dot.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n")
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object"}')
    for extra, message in [
        (["-i", str(image)], "--image does not apply to compact (a compaction has no prompt)"),
        (
            ["--output-schema", str(schema)],
            "--output-schema does not apply to compact (a compaction has no final message)",
        ),
        (["--last"], "give a SESSION_ID or PATH, or --last, not both"),
    ]:
        result = mini_codex(["compact", str(path), *extra], env, cwd=tmp_path)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", f"error: {message}\n")
    assert path.read_bytes() == before  # nothing was opened or written

    summarizer = write_script(
        tmp_path / "summary.jsonl", [{"output": [{"type": "message", "content": "did task one"}]}]
    )
    summary_file = tmp_path / "summary.txt"
    result = mini_codex(
        [
            "compact",
            str(path),
            "--model",
            f"scripted:{summarizer}",
            "-o",
            str(summary_file),
            "--json-events",
            "mini-codex",
        ],
        env,
        cwd=tmp_path,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert summary_file.read_text() == f"{SUMMARY_PREFIX}\ndid task one"
    events = [event["type"] for event in json_lines(result.stdout)]
    assert events[0] == "session_configured"
    assert "context_compacted" in events
    assert events[-1] == "task_complete"
