"""Files that are not rollouts are refused, and never changed (issue 19).

Reproduction: ``rollout verify notes.txt`` on a plain text file printed "ok … invariants hold",
and ``resume notes.txt`` appended session records to the user's file. Now the first non-blank
line must be a ``session_meta`` (ours, Codex's, or the legacy bare meta object); otherwise every
command prints ``error: PATH: not a rollout (why)`` and exits non-zero, and the file stays
byte-identical. A hypothesis test hands arbitrary bytes to ``verify``, ``inspect``, ``replay`` and
``resume``: each gives a result or one error line, never a traceback, and never rewrites what
the file held (a resume of a real rollout only appends).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from mini_codex.cli.main import app

runner = CliRunner()
FIXTURES = Path(__file__).parents[1] / "fixtures" / "rollouts"
SCRIPT = [{"output": [{"type": "message", "content": "Still here."}]}]
META = (
    b'{"timestamp":"2026-09-01T10:00:00.001Z","type":"session_meta","payload":'
    b'{"id":"01900000-0000-7000-8000-0000000000f1","timestamp":"2026-09-01T10:00:00.000Z",'
    b'"cwd":"/repo","originator":"mini_codex","cli_version":"0.1.0","mini_codex_schema":1}}\n'
)
USER = (
    b'{"timestamp":"2026-09-01T10:00:00.003Z","type":"response_item","payload":{"type":"message",'
    b'"role":"user","content":[{"type":"input_text","text":"hi"}]}}\n'
)


def invoke(args: list[str], home: Path) -> Result:
    env: dict[str, str | None] = {"MINI_CODEX_HOME": str(home), "OPENAI_API_KEY": None}
    return runner.invoke(app, args, env=env)


def script_file(tmp: Path) -> Path:
    path = tmp / "script.jsonl"
    if not path.exists():
        path.write_text("".join(json.dumps(line) + "\n" for line in SCRIPT))
    return path


def resume_args(path: Path, tmp: Path) -> list[str]:
    model = f"scripted:{script_file(tmp)}"
    return ["resume", str(path), "again", "--model", model, "--cd", str(tmp), "--json"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"buy milk\ncall mom\n", "the first line is not JSON"),
        (b"\n\n  [1, 2]\n", "the first line is a JSON array, not a session_meta record"),
        (b'{"name": "pkg", "version": "1.0"}\n', "the first line is a JSON object without a "),
        (USER + META, "the first record is 'response_item', not session_meta"),
        (b'{"type":"session_meta","payload":3}\n', "the session_meta record has no payload"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00\n", "binary data"),
    ],
)
def test_every_command_refuses_a_file_that_is_not_a_rollout(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    home = tmp_path / "home"
    for args in (
        ["rollout", "verify", str(path)],
        ["rollout", "inspect", str(path)],
        ["rollout", "replay", str(path)],
        resume_args(path, tmp_path),
    ):
        result = invoke(args, home)
        assert result.exit_code != 0, args
        assert result.stderr.startswith(f"error: {path}: not a rollout ({reason}"), args
        assert result.stderr.count("\n") == 1, result.stderr
        assert path.read_bytes() == content
    assert not (home / "sessions").exists()


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "rollout.jsonl"
    os.mkfifo(fifo)
    for args in (["rollout", "verify", str(fifo)], resume_args(fifo, tmp_path)):
        done: list[Result] = []
        worker = threading.Thread(
            target=lambda a=args, out=done: out.append(invoke(a, tmp_path / "h"))
        )
        worker.daemon = True
        worker.start()
        worker.join(20)
        if not done:  # the old reader blocked in open(); free it before failing
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            pytest.fail(f"{args[:2]} blocked on a FIFO")
        assert (done[0].exit_code != 0, done[0].stderr) == (
            True,
            f"error: {fifo}: not a rollout (not a regular file)\n",
        )


@pytest.mark.parametrize(
    "name",
    [
        "features/legacy_pre_envelope.jsonl",
        "codex/codex-tui-0.155.1-2026-09-subagent-thread-filtered.jsonl",
        "minimal/single_turn.jsonl",
    ],
)
def test_real_rollouts_and_the_legacy_header_are_accepted(name: str, tmp_path: Path) -> None:
    result = invoke(["rollout", "replay", "--json", str(FIXTURES / name)], tmp_path)
    assert (result.exit_code, result.stderr) == (0, "")


# --- any bytes ------------------------------------------------------------------------------------

LINES = st.sampled_from(
    [META, USER, b"\n", b"   \n", b"not json\n", b"[1]\n", b'{"type":"compacted"}\n', b"\x00\xff"]
)
CONTENT = st.one_of(
    st.binary(max_size=200),
    st.lists(LINES, max_size=6).map(b"".join),
    st.tuples(st.just(META), st.lists(LINES, max_size=5), st.binary(max_size=30)).map(
        lambda parts: parts[0] + b"".join(parts[1]) + parts[2]
    ),
)


def _one_line_or_result(result: Result) -> None:
    assert "Traceback" not in result.stderr + result.stdout
    assert result.exception is None or isinstance(result.exception, SystemExit)
    if result.exit_code not in (0, 1):  # 1: verify found a violation (reported per line)
        assert result.stderr.startswith("error: ")
        assert result.stderr.count("\n") == 1, result.stderr


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(content=CONTENT)
def test_any_bytes_give_a_result_or_one_error_line_and_stay_unchanged(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    for command in ("verify", "inspect", "replay"):
        result = invoke(["rollout", command, str(path)], tmp_path / "home")
        _one_line_or_result(result)
        if result.exit_code not in (0, 1):
            assert result.stderr.startswith("error: ")
        assert path.read_bytes() == content


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(content=CONTENT)
def test_resume_of_any_bytes_refuses_or_only_appends(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    result = invoke(resume_args(path, tmp_path), tmp_path / "home")
    _one_line_or_result(result)
    after = path.read_bytes()
    if result.exit_code == 0:
        assert after.startswith(content)
        assert len(after) > len(content)
    else:
        assert after == content
