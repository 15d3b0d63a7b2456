"""``mini-codex exec`` end to end (a real subprocess) against the local OpenAI-compatible server:
the Responses API configured only by ``OPENAI_BASE_URL`` + ``OPENAI_API_KEY``, and a Chat
Completions server configured in ``$MINI_CODEX_HOME/config.toml``."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


def _load_fake_server() -> ModuleType:
    """``tests/models/fake_openai_server.py`` (test helpers are not a package)."""
    name = "fake_openai_server"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).parents[1] / "models" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


fake = _load_fake_server()
MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")


def run_exec(
    tmp_path: Path, env: dict[str, str], *args: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "MINI_CODEX_HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        [MINI_CODEX, "exec", "--json-events=mini-codex", "-C", str(work), *args],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=120,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done, events


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event.get("type") == kind]


def test_exec_against_a_responses_server_with_only_the_openai_env(tmp_path: Path) -> None:
    # The Responses provider gets Codex 0.169's command tool by default: unified exec.
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command",
            "arguments": json.dumps({"cmd": "echo from-the-tool"})}  # fmt: skip
    answer = {"type": "message", "id": "msg_1", "role": "assistant",
              "content": [{"type": "output_text", "text": "All done."}]}  # fmt: skip
    replies = [
        fake.sse_reply(fake.responses_events([call], usage=fake.usage(900, 20))),
        fake.sse_reply(
            fake.responses_events([answer], response_id="resp_2", usage=fake.usage(950, 5))
        ),
    ]
    with fake.serve(replies) as server:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-local"}
        done, events = run_exec(
            tmp_path, env, "--sandbox", "danger-full-access", "run the tool, then finish"
        )
    assert done.returncode == 0, done.stderr
    (tool_end,) = of_type(events, "tool_call_end")
    assert "from-the-tool" in tool_end["output"]
    assert of_type(events, "task_complete")[-1]["last_agent_message"] == "All done."
    assert of_type(events, "error") == []
    totals = [
        e["info"]["total_token_usage"]["total_tokens"] for e in of_type(events, "token_count")
    ]
    assert totals == [920, 1875]
    assert [(r.path, r.headers["authorization"]) for r in server.requests] == [
        ("/v1/responses", "Bearer sk-local"),
        ("/v1/responses", "Bearer sk-local"),
    ]
    first, second = (request.body for request in server.requests)
    assert (first["model"], first["store"], first["stream"]) == ("gpt-5.1-codex", False, True)
    names = {tool["name"] for tool in first["tools"]}
    assert names >= {"exec_command", "write_stdin", "apply_patch"}
    assert "shell" not in names
    outputs = [item for item in second["input"] if item["type"] == "function_call_output"]
    assert [item["call_id"] for item in outputs] == ["call_1"]
    assert "from-the-tool" in outputs[0]["output"]


def test_exec_against_a_chat_completions_server_from_config_toml(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        'model = "qwen2.5-coder:7b"\n'
        'model_provider = "local"\n'
        "[model_providers.local]\n"
        'name = "Local server"\n'
        'base_url = "http://127.0.0.1:9/v1"\n'
        'wire_api = "chat"\n'
        "stream_max_retries = 2\n",
        encoding="utf-8",
    )
    replies = [
        fake.Reply(
            headers={"content-type": "text/event-stream"},
            chunks=fake.chat_chunks(text="Hi from chat.", usage=fake.chat_usage(300, 4)),
        )
    ]
    with fake.serve(replies) as server:
        # -c overrides the (dead) base_url of the file.
        done, events = run_exec(
            tmp_path, {}, "-c", f'model_providers.local.base_url="{server.url}"', "say hi"
        )
    assert done.returncode == 0, done.stderr
    assert of_type(events, "task_complete")[-1]["last_agent_message"] == "Hi from chat."
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert "authorization" not in request.headers
    assert request.body["model"] == "qwen2.5-coder:7b"
    assert request.body["messages"][0]["role"] == "system"
    assert request.body["messages"][-1] == {"role": "user", "content": "say hi"}


def test_exec_with_an_invalid_api_key_reports_it_clearly(tmp_path: Path) -> None:
    reply = fake.error_reply(
        401, {"message": "Incorrect API key provided: sk-bad.", "code": "invalid_api_key"}
    )
    with fake.serve([reply]) as server:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-bad"}
        done, events = run_exec(tmp_path, env, "hello")
    assert done.returncode == 1
    (error,) = of_type(events, "error")
    assert error["message"] == (
        f"model provider 'openai' ({server.url}): invalid API key or missing permissions "
        "(HTTP 401): Incorrect API key provided: sk-bad.. Check the API key configured for this "
        "provider. (the key is read from OPENAI_API_KEY)"
    )
    assert len(server.requests) == 1  # not retried


def test_exec_without_an_api_key_fails_before_any_request(tmp_path: Path) -> None:
    done, _ = run_exec(tmp_path, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "hello")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: model provider 'openai' needs an API key in the environment variable OPENAI_API_KEY"
    )
