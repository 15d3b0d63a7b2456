"""The automation flags of ``exec`` (Codex's): ``-o``, ``--output-schema``, ``--ephemeral``,
``--skip-git-repo-check``, the prompt from stdin, and ``--json-events``. In-process (CliRunner)
with a scripted model, plus the request bodies of both wire APIs against the local server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from mini_codex.cli.main import app

REPO = Path(__file__).parents[2]
sys.path[:0] = [str(REPO / "tests" / "models")]

import fake_openai_server as fake  # noqa: E402

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
runner = CliRunner()
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def script(path: Path, *texts: str) -> Path:
    lines = [{"output": [{"type": "message", "content": text}], "end_turn": True} for text in texts]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def invoke(tmp_path: Path, args: list[str], stdin: str | None = None) -> Result:
    env: dict[str, str | None] = {"MINI_CODEX_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": None}
    base = ["exec", "--cd", str(tmp_path), "--model", f"scripted:{tmp_path / 's.jsonl'}"]
    return runner.invoke(app, [*base, *args], env=env, input=stdin)


def rollouts(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "home").glob("sessions/**/rollout-*.jsonl"))


def lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_output_last_message_writes_the_final_message(tmp_path: Path) -> None:
    script(tmp_path / "s.jsonl", "The answer is 42.")
    out = tmp_path / "last.txt"
    result = invoke(tmp_path, ["-o", str(out), "go"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert out.read_text() == "The answer is 42."


def test_output_schema_valid_final_message_exits_0(tmp_path: Path) -> None:
    script(tmp_path / "s.jsonl", '{"answer": 42}')
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    out = tmp_path / "last.json"
    args = ["--json", "--output-schema", str(tmp_path / "schema.json"), "-o", str(out), "go"]
    result = invoke(tmp_path, args)
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(out.read_text()) == {"answer": 42}
    assert lines(result)[-2]["item"] == {"id": "item_0", "type": "agent_message",
                                         "text": '{"answer": 42}'}  # fmt: skip


def test_output_schema_mismatch_is_a_clear_error_and_exit_1(tmp_path: Path) -> None:
    script(tmp_path / "s.jsonl", '{"answer": "forty-two"}')
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    result = invoke(tmp_path, ["--output-schema", str(tmp_path / "schema.json"), "go"])
    assert result.exit_code == 1
    assert result.stderr == (
        "error: the final message does not match the output schema at answer: "
        "'forty-two' is not of type 'integer'\n"
    )
    assert len(rollouts(tmp_path)) == 1  # the session is kept


def test_output_schema_not_json_and_bad_schema_files(tmp_path: Path) -> None:
    script(tmp_path / "s.jsonl", "plain words")
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    result = invoke(tmp_path, ["--output-schema", str(tmp_path / "schema.json"), "go"])
    not_json = "error: the final message is not JSON, so it does not match the output schema\n"
    assert (result.exit_code, result.stderr) == (1, not_json)
    (tmp_path / "bad.json").write_text('{"type": 12}')
    result = invoke(tmp_path, ["--output-schema", str(tmp_path / "bad.json"), "go"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: --output-schema {tmp_path / 'bad.json'}: not a valid")
    (tmp_path / "broken.json").write_text("{")
    result = invoke(tmp_path, ["--output-schema", str(tmp_path / "broken.json"), "go"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: --output-schema {tmp_path / 'broken.json'}: not JSON")


def test_ephemeral_writes_no_rollout_and_skip_git_repo_check_is_accepted(tmp_path: Path) -> None:
    script(tmp_path / "s.jsonl", "done")
    result = invoke(tmp_path, ["--ephemeral", "--skip-git-repo-check", "--json", "go"])
    assert result.exit_code == 0, result.stderr
    assert rollouts(tmp_path) == []
    assert [line["type"] for line in lines(result)] == [
        "thread.started", "turn.started", "item.completed", "turn.completed"]  # fmt: skip
    script(tmp_path / "s.jsonl", "done")
    assert invoke(tmp_path, ["go"]).exit_code == 0
    assert len(rollouts(tmp_path)) == 1


def user_texts(tmp_path: Path) -> list[str]:
    (path,) = rollouts(tmp_path)
    texts = []
    for raw in path.read_text().splitlines():
        line = json.loads(raw)
        if line["type"] == "event_msg" and line["payload"]["type"] == "user_message":
            texts.append(line["payload"]["message"])
    return texts


def test_a_prompt_with_piped_stdin_gets_it_appended_as_a_stdin_block(tmp_path: Path) -> None:
    script(tmp_path / "s.jsonl", "ok")
    result = invoke(tmp_path, ["summarize"], stdin="line one\nline two\n")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "Reading additional input from stdin...\n"
    assert user_texts(tmp_path) == ["summarize\n\n<stdin>\nline one\nline two\n</stdin>"]


def test_dash_reads_the_whole_prompt_from_stdin(tmp_path: Path) -> None:
    script(tmp_path / "s.jsonl", "ok")
    result = invoke(tmp_path, ["-"], stdin="the task\n")
    assert (result.exit_code, result.stderr) == (0, "")
    assert user_texts(tmp_path) == ["the task\n"]


def test_unknown_json_events_format_is_refused(tmp_path: Path) -> None:
    script(tmp_path / "s.jsonl", "ok")
    result = invoke(tmp_path, ["--json-events", "xml", "go"])
    assert (result.exit_code, result.stderr) == (
        2, "error: unknown --json-events 'xml' (codex, mini-codex)\n")  # fmt: skip


# --- the schema on the wire ---------------------------------------------------------------------

ANSWER = '{"answer": 7}'
FORMAT = {"type": "json_schema", "name": "codex_output_schema", "schema": SCHEMA, "strict": True}


def run_against(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    work = tmp_path / "work"
    work.mkdir()
    base = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
            "MINI_CODEX_HOME": str(tmp_path / "home")}  # fmt: skip
    return subprocess.run(
        [MINI_CODEX, "exec", "-C", str(work), "--output-schema", str(tmp_path / "schema.json"),
         "-o", str(tmp_path / "out.json"), "answer"],
        capture_output=True, text=True, env={**base, **env}, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_output_schema_is_sent_as_responses_text_format(tmp_path: Path) -> None:
    message = {"type": "message", "id": "msg_1", "role": "assistant",
               "content": [{"type": "output_text", "text": ANSWER}]}  # fmt: skip
    reply = fake.sse_reply(fake.responses_events([message], usage=fake.usage(10, 2)))
    with fake.serve([reply]) as server:
        done = run_against(tmp_path, {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-x"})
    assert done.returncode == 0, done.stderr
    (request,) = server.requests
    assert request.body["text"] == {"format": FORMAT}
    assert json.loads((tmp_path / "out.json").read_text()) == {"answer": 7}


def test_output_schema_is_sent_as_chat_response_format(tmp_path: Path) -> None:
    chunks = fake.chat_chunks(text=ANSWER, usage=fake.chat_usage(10, 2))
    reply = fake.Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)
    with fake.serve([reply]) as server:
        (tmp_path / "home").mkdir()
        (tmp_path / "home" / "config.toml").write_text(
            'model = "local-model"\nmodel_provider = "local"\n[model_providers.local]\n'
            f'name = "Local"\nbase_url = "{server.url}"\nwire_api = "chat"\n'
        )
        done = run_against(tmp_path, {})
    assert done.returncode == 0, done.stderr
    (request,) = server.requests
    schema = {key: value for key, value in FORMAT.items() if key != "type"}
    assert request.body["response_format"] == {"type": "json_schema", "json_schema": schema}
    assert json.loads((tmp_path / "out.json").read_text()) == {"answer": 7}
