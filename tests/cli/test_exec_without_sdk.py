"""A whole ``mini-codex exec --json`` turn against a local server never imports the ``openai``
SDK (issue 13: ``import openai`` cost ~0.3 s before the first request byte), nor the heavy
modules ``exec`` does not need (terminal UIs, ``rich``, ``tomlkit``, batch and rollout commands),
for both OpenAI-protocol providers; the requests still carry the headers the SDK used to send."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_exec_openai import fake

NOT_FOR_EXEC = (
    "openai",
    "rich",
    "tomlkit",
    "textual",
    "prompt_toolkit",
    "fsspec",
    "mini_codex.batch",
    "mini_codex.tui",
    "mini_codex.cli.batch_cmd",
    "mini_codex.cli.rollout_cmd",
    "mini_codex.cli.inspect_timeline",
)
PROBE = (
    "import atexit, sys\n"
    f"HEAVY = {NOT_FOR_EXEC!r}\n"
    "def _report():\n"
    "    names = sorted(m for m in sys.modules if m in HEAVY or m.startswith(\n"
    "        tuple(h + '.' for h in HEAVY)))\n"
    "    sys.stderr.write('SDK-MODULES=' + json.dumps(names) + '\\n')\n"
    "import json\n"
    "atexit.register(_report)\n"
    "from mini_codex.cli.entry import main\n"
    "sys.argv[0] = 'mini-codex'\n"
    "main()\n"
)


Run = subprocess.CompletedProcess[str]


def _exec(tmp_path: Path, env: dict[str, str]) -> tuple[Run, list[str]]:
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "exec", "--json", "-C", str(work), "say hi"],
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            "MINI_CODEX_HOME": str(tmp_path / "home"),
            **env,
        },
        timeout=120,
    )
    reports = [line for line in done.stderr.splitlines() if line.startswith("SDK-MODULES=")]
    assert len(reports) == 1, done.stderr
    return done, json.loads(reports[0].removeprefix("SDK-MODULES="))


def _agent_texts(stdout: str) -> list[str]:
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [
        event["item"]["text"]
        for event in events
        if event.get("type") == "item.completed" and event["item"].get("type") == "agent_message"
    ]


def test_a_responses_turn_never_imports_the_sdk_and_sends_its_headers(tmp_path: Path) -> None:
    answer = {"type": "message", "id": "msg_1", "role": "assistant",
              "content": [{"type": "output_text", "text": "Hello from the server."}]}  # fmt: skip
    replies = [fake.sse_reply(fake.responses_events([answer], usage=fake.usage(10, 3)))]
    with fake.serve(replies) as server:
        env = {
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "sk-local",
            "OPENAI_ORG_ID": "org-1",
            "OPENAI_PROJECT_ID": "proj-1",
        }
        done, sdk_modules = _exec(tmp_path, env)
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    assert _agent_texts(done.stdout) == ["Hello from the server."]
    assert sdk_modules == []
    (request,) = requests
    assert request.path == "/v1/responses"
    sent = {
        name: request.headers.get(name)
        for name in ("authorization", "content-type", "accept", "openai-organization",
                     "openai-project", "content-length", "x-stainless-retry-count")
    }  # fmt: skip
    assert sent == {
        "authorization": "Bearer sk-local",
        "content-type": "application/json",
        "accept": "application/json",
        "openai-organization": "org-1",
        "openai-project": "proj-1",
        "content-length": str(len(request.raw)),
        "x-stainless-retry-count": "0",
    }


def test_a_chat_turn_never_imports_the_sdk_and_sends_no_key(tmp_path: Path) -> None:
    chunks = fake.chat_chunks(text="Hi from chat.", usage=fake.chat_usage(10, 2))
    replies = [fake.Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)]
    with fake.serve(replies) as server:
        home = tmp_path / "home"
        home.mkdir()
        (home / "config.toml").write_text(
            'model = "local-model"\nmodel_provider = "local"\n[model_providers.local]\n'
            f'name = "local"\nbase_url = "{server.url}"\nwire_api = "chat"\n'
            '[model_providers.local.http_headers]\nX-Team = "blue"\n'
            '[model_providers.local.query_params]\napi-version = "2025-01-01"\n'
        )
        done, sdk_modules = _exec(tmp_path, {})
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    assert _agent_texts(done.stdout) == ["Hi from chat."]
    assert sdk_modules == []
    (request,) = requests
    assert request.path == "/v1/chat/completions"
    assert request.query == {"api-version": ["2025-01-01"]}
    assert request.headers.get("x-team") == "blue"
    assert "authorization" not in request.headers
    assert json.loads(request.raw)["stream"] is True


def test_the_probe_sees_an_sdk_import() -> None:
    """The probe itself works: a process that does import the SDK is reported."""
    script = PROBE.replace("main()\n", "import openai\nsys.argv[1:] = ['--help']\nmain()\n")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    (report,) = [line for line in done.stderr.splitlines() if line.startswith("SDK-MODULES=")]
    assert "openai" in json.loads(report.removeprefix("SDK-MODULES="))
