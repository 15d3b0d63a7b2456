"""The Python SDK (Codex's TypeScript SDK shape, in-process): ``run``, ``run_sync``,
``run_streamed`` (the same events as ``exec --json``), ``output_schema``, ``resume_thread`` of
ours and of a Codex CLI rollout, and failures raised as one ``CodexError`` with the turn's
message."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mini_codex
from mini_codex.protocol import Message, message_text
from mini_codex.protocol.exec_events import (
    AgentMessageItem,
    CommandExecutionItem,
    FileChange,
    FileChangeItem,
    ReasoningItem,
    Usage,
)
from mini_codex.rollout.reader import read_rollout
from mini_codex.sdk import Codex, CodexError, Turn
from mini_codex.testing import ScriptedModel, ScriptedResponse, assistant

REPO = Path(__file__).parents[2]
sys.path[:0] = [str(REPO / "tests" / "models")]

import fake_openai_server as fake  # noqa: E402

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
pytestmark = pytest.mark.anyio
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"
USAGE = {"input_tokens": 100, "output_tokens": 10}
SCRIPT = [
    {
        "output": [
            {"type": "reasoning", "summary": "Plan it"},
            {"type": "function_call", "name": "apply_patch", "arguments": {"input": PATCH}},
        ],
        "usage": USAGE,
    },
    {
        "output": [
            {"type": "function_call", "name": "shell", "arguments": {"command": "cat hello.txt"}}
        ],
        "usage": USAGE,
    },
    {"output": [{"type": "message", "content": "hello.txt says hi."}], "usage": USAGE},
]


def write_script(path: Path, lines: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return f"scripted:{path}"


def codex_for(tmp_path: Path, lines: list[dict[str, Any]], **config: Any) -> Codex:
    model = write_script(tmp_path / "script.jsonl", lines)
    env = {"PATH": os.environ["PATH"]}
    return Codex(
        home=tmp_path / "home", model=model, sandbox_mode="danger-full-access", env=env, **config
    )


def work_dir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work


def expected_items(work: Path) -> list[Any]:
    return [
        ReasoningItem(id="item_0", text="Plan it"),
        FileChangeItem(
            id="item_1",
            changes=(FileChange(path=f"{work}/hello.txt", kind="add"),),
            status="completed",
        ),
        CommandExecutionItem(
            id="item_2",
            command="cat hello.txt",
            aggregated_output="hi\n",
            exit_code=0,
            status="completed",
        ),
        AgentMessageItem(id="item_3", text="hello.txt says hi."),
    ]


async def test_run_returns_the_final_response_items_and_usage(tmp_path: Path) -> None:
    work = work_dir(tmp_path)
    thread = codex_for(tmp_path, SCRIPT).start_thread(working_directory=work)
    assert thread.id is None
    turn = await thread.run("write hello.txt and show it")
    assert turn == Turn(
        final_response="hello.txt says hi.",
        items=expected_items(work),
        usage=Usage(input_tokens=300, output_tokens=30),
    )
    assert thread.id is not None
    assert thread.rollout_path is not None
    assert thread.id in thread.rollout_path.name


def test_run_sync_and_the_top_level_export(tmp_path: Path) -> None:
    work = work_dir(tmp_path)
    assert mini_codex.Codex is Codex
    thread = codex_for(tmp_path, SCRIPT).start_thread(working_directory=work)
    turn = thread.run_sync("write hello.txt and show it")
    assert (turn.final_response, turn.items) == ("hello.txt says hi.", expected_items(work))


def exec_json_lines(tmp_path: Path, script: str, work: Path) -> list[dict[str, Any]]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "MINI_CODEX_HOME": str(tmp_path / "cli-home"),
    }
    done = subprocess.run(
        [
            MINI_CODEX,
            "exec",
            "--json",
            "--model",
            script,
            "-s",
            "danger-full-access",
            "-C",
            str(work),
            "go",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


async def test_run_streamed_events_equal_the_exec_json_lines(tmp_path: Path) -> None:
    work = work_dir(tmp_path)
    codex = codex_for(tmp_path, SCRIPT)
    thread = codex.start_thread(working_directory=work)
    streamed = await thread.run_streamed("go")
    events = [event.to_json() async for event in streamed.events]
    shutil.rmtree(work)
    work.mkdir()
    lines = exec_json_lines(tmp_path, f"scripted:{tmp_path / 'script.jsonl'}", work)
    assert events[0] == {"type": "thread.started", "thread_id": thread.id}
    assert events[1:] == lines[1:]
    assert lines[0]["type"] == "thread.started"


SCHEMA = {
    "type": "object",
    "properties": {"status": {"enum": ["ok", "failed"]}},
    "required": ["status"],
}


async def test_output_schema_valid_and_invalid(tmp_path: Path) -> None:
    work = work_dir(tmp_path)
    ok = [{"output": [{"type": "message", "content": '{"status": "ok"}'}]}]
    turn = (
        await codex_for(tmp_path, ok)
        .start_thread(working_directory=work)
        .run("status?", output_schema=SCHEMA)
    )
    assert json.loads(turn.final_response) == {"status": "ok"}
    bad = [{"output": [{"type": "message", "content": '{"status": "maybe"}'}]}]
    thread = codex_for(tmp_path, bad).start_thread(working_directory=work)
    with pytest.raises(CodexError) as info:
        await thread.run("status?", output_schema=SCHEMA)
    assert str(info.value) == (
        "the final message does not match the output schema at status: "
        "'maybe' is not one of ['ok', 'failed']"
    )
    with pytest.raises(CodexError, match="output_schema: not a valid JSON Schema"):
        await thread.run("status?", output_schema={"type": 5})


def user_messages(path: Path) -> list[str]:
    found = []
    for line in read_rollout(path).lines:
        payload = getattr(line, "payload", None)
        if getattr(payload, "type", None) == "user_message":
            found.append(payload.message)  # type: ignore[union-attr]
    return found


async def test_resume_thread_continues_our_thread(tmp_path: Path) -> None:
    work = work_dir(tmp_path)
    first = [{"output": [{"type": "message", "content": "one"}]}]
    thread = codex_for(tmp_path, first).start_thread(working_directory=work)
    await thread.run("first task")
    assert thread.id is not None
    # A new Codex (as in a new process), with a model whose prompts we can read.
    model = ScriptedModel([ScriptedResponse([assistant("two")])])
    codex = Codex(home=tmp_path / "home", model_client=model)
    again = codex.resume_thread(thread.id[:13])
    assert (again.id, again.rollout_path) == (thread.id, thread.rollout_path)
    turn = await again.run("second task")
    assert turn.final_response == "two"
    (prompt,) = model.prompts
    texts = [message_text(item) for item in prompt.input if isinstance(item, Message)]
    # The history of the first turn, then the new input (a model-switch note may sit between).
    assert texts[-1] == "second task"
    assert texts.index("first task") < texts.index("one") < len(texts) - 1
    assert thread.rollout_path is not None
    assert user_messages(thread.rollout_path) == ["first task", "second task"]


async def test_resume_thread_of_a_codex_cli_rollout_copies_it_first(tmp_path: Path) -> None:
    source = (
        REPO
        / "tests"
        / "fixtures"
        / "rollouts"
        / "codex"
        / ("codex-exec-0.169.0-2026-11-local-fake-server-exec-command-20-steps.jsonl")
    )
    codex_home = tmp_path / "codex-home"
    day = codex_home / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True)
    copy = day / "rollout-2026-11-29T19-31-21-01a228ca-5f9c-7353-9ff4-83a8bc52a40e.jsonl"
    shutil.copyfile(source, copy)
    before = copy.read_bytes()
    work = work_dir(tmp_path)
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "resumed"}],
    }
    reply = fake.sse_reply(fake.responses_events([message], usage=fake.usage(10, 2)))
    with fake.serve([reply]) as server:
        codex = Codex(
            home=tmp_path / "home",
            api_key="sk-local",
            base_url=server.url,
            organization="org-1",
            project="proj-1",
            codex_home=codex_home,
            model="gpt-5.1-codex",
        )
        thread = codex.resume_thread("01a228ca-5f9c", working_directory=work)
        assert thread.id == "01a228ca-5f9c-7353-9ff4-83a8bc52a40e"
        turn = await thread.run("continue")
    assert turn.final_response == "resumed"
    assert copy.read_bytes() == before  # the Codex CLI file is never written
    # The connection settings given to Codex(...) are the request's headers.
    (sent,) = server.requests
    assert (
        sent.headers.get("authorization"),
        sent.headers.get("openai-organization"),
        sent.headers.get("openai-project"),
    ) == ("Bearer sk-local", "org-1", "proj-1")
    assert thread.rollout_path is not None
    assert thread.rollout_path.is_relative_to(tmp_path / "home")
    # The request carries the Codex thread's history, then the new input.
    (request,) = server.requests
    texts = [
        part.get("text") for item in request.body["input"] for part in item.get("content") or []
    ]
    assert "run true 20 times" in texts
    assert texts[-1] == "continue"
    assert texts.index("run true 20 times") < texts.index("continue")


async def test_a_failed_turn_raises_codex_error_with_the_turn_message(tmp_path: Path) -> None:
    work = work_dir(tmp_path)
    error = {"message": "The model `nope` does not exist", "type": "invalid_request_error"}
    with fake.serve([fake.error_reply(400, error)]) as server:
        codex = Codex(home=tmp_path / "home", api_key="sk-local", base_url=server.url, model="nope")
        thread = codex.start_thread(working_directory=work)
        with pytest.raises(CodexError) as info:
            await thread.run("hello")
    assert str(info.value) == (
        f"model provider 'openai' ({server.url}): invalid request (HTTP 400): "
        "The model `nope` does not exist"
    )
    assert isinstance(info.value, mini_codex.MiniCodexError)


async def test_setup_errors_are_codex_errors_too(tmp_path: Path) -> None:
    thread = Codex(
        home=tmp_path / "home", model=f"scripted:{tmp_path / 'missing.jsonl'}"
    ).start_thread(working_directory=work_dir(tmp_path))
    with pytest.raises(CodexError, match="cannot read model script"):
        await thread.run("hello")
    with pytest.raises(CodexError, match="no thread or rollout file matches 'nope'"):
        Codex(home=tmp_path / "home").resume_thread("nope")


async def test_leaving_run_streamed_early_interrupts_the_turn(tmp_path: Path) -> None:
    work = work_dir(tmp_path)
    slow = [
        {
            "output": [
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": {"command": "sleep 3; touch late.txt"},
                }
            ]
        },
        {"output": [{"type": "message", "content": "never"}]},
    ]
    thread = codex_for(tmp_path, slow).start_thread(working_directory=work)
    streamed = await thread.run_streamed("go")
    seen = []
    async for event in streamed.events:
        seen.append(event.type)
        if event.type == "item.started":
            break
    await streamed.events.aclose()
    assert seen == ["thread.started", "turn.started", "item.started"]
    assert not (work / "late.txt").exists()
    assert thread.rollout_path is not None
    kinds = [
        getattr(getattr(line, "payload", None), "type", None)
        for line in read_rollout(thread.rollout_path).lines
    ]
    assert "turn_aborted" in kinds
    assert "task_complete" not in kinds
