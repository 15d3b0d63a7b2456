"""The official Codex TypeScript SDK (``@openai/codex-sdk``, pinned in package.json) drives
``mini-codex`` end to end: ``new Codex({ codexPathOverride })``, ``thread.run`` with a command,
``runStreamed`` on the same thread, ``outputSchema``, ``resumeThread(id)`` from a new ``Codex``
instance with a ``local_image`` input, and a failing request (the SDK rejects).

The same script (``sdk_ts/drive_sdk.mjs``) runs against the real Codex CLI
(``node_modules/.bin/codex``, 0.169.0) with the same assertions, so the test is known to test what
the SDK really needs. Both run against the local OpenAI-protocol server; only the home directory
differs (``MINI_CODEX_HOME`` / ``CODEX_HOME``). Without node or ``node_modules`` the tests skip
with the reason (under ``CI=true`` a skip fails: ``.ci/run`` runs ``npm ci``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).parents[2]
sys.path[:0] = [str(REPO / "tests" / "models"), str(REPO / "tests")]

import fake_openai_server as fake  # noqa: E402

from image_files import png  # noqa: E402

SCRIPT = Path(__file__).parent / "sdk_ts" / "drive_sdk.mjs"
SDK = REPO / "node_modules" / "@openai" / "codex-sdk" / "dist" / "index.js"
CODEX = REPO / "node_modules" / ".bin" / "codex"
MINI_CODEX = Path(sys.executable).parent / "mini-codex"
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}
FAILURE = "The model `gpt-5.5` does not exist or you do not have access to it."


def _missing(*paths: Path) -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    for path in paths:
        if not path.exists():
            return f"{path.relative_to(REPO)} is missing (run `npm ci` at the repository root)"
    return None


def _call(call_id: str, cmd: str) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id,
            "name": "exec_command", "arguments": json.dumps({"cmd": cmd})}  # fmt: skip


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


def _reply(item: dict[str, Any], n: int) -> fake.Reply:
    return fake.sse_reply(
        fake.responses_events([item], response_id=f"resp_{n}", usage=fake.usage(50, 5))
    )


def replies() -> list[fake.Reply]:
    return [
        _reply(_call("call_1", "echo sdk-hello"), 1),
        _reply(_message("ran it"), 2),
        _reply(_message("second turn"), 3),
        _reply(_message('{"answer": 42}'), 4),
        _reply(_message("a green square"), 5),
        fake.error_reply(
            404,
            {"message": FAILURE, "type": "invalid_request_error", "code": "model_not_found"},
        ),
    ]


@dataclass
class Outcome:
    code: int
    result: dict[str, Any]
    stderr: str
    requests: list[fake.Recorded]
    work: Path
    extra: Path


def drive(tmp_path: Path, cli: Path, home_env: str) -> Outcome:
    """Run the SDK script against ``cli`` with a fresh home (``home_env`` names its variable)."""
    work, extra, home = tmp_path / "work", tmp_path / "extra", tmp_path / "home"
    for path in (work, extra, home):
        path.mkdir()
    image = tmp_path / "square.png"
    image.write_bytes(png(4, 4))
    with fake.serve(replies(), refuse_websocket=True) as server:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            home_env: str(home),
        }
        done = subprocess.run(
            ["node", str(SCRIPT), str(cli), server.url, str(work), str(extra), str(image)],
            capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    result = json.loads(done.stdout.splitlines()[-1]) if done.stdout.strip() else {}
    return Outcome(done.returncode, result, done.stderr, server.requests, work, extra)


def check(outcome: Outcome) -> None:
    """What the SDK must see from a Codex-compatible CLI (the same for Codex and mini-codex)."""
    assert outcome.code == 0, outcome.stderr
    result = outcome.result
    thread_id = result["run"]["threadId"]
    assert isinstance(thread_id, str)
    assert len(thread_id) == 36

    # 1. thread.run with a command
    (command,) = [i for i in result["run"]["items"] if i["type"] == "command_execution"]
    assert "echo sdk-hello" in command["command"]
    assert (command["aggregated_output"], command["exit_code"], command["status"]) == (
        "sdk-hello\n",
        0,
        "completed",
    )
    messages = [i["text"] for i in result["run"]["items"] if i["type"] == "agent_message"]
    assert (messages, result["run"]["finalResponse"]) == (["ran it"], "ran it")
    assert result["run"]["usage"]["input_tokens"] == 100  # two requests of 50

    # 2. runStreamed on the same thread: Codex's events, the same thread id
    streamed = [e for e in result["streamed"] if e["type"] != "error"]
    assert streamed == [
        {"type": "thread.started", "thread_id": thread_id},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": streamed[2]["item"]["id"],
                                            "type": "agent_message", "text": "second turn"}},
        {"type": "turn.completed", "usage": streamed[3]["usage"]},
    ]  # fmt: skip
    assert result["streamedThreadId"] == thread_id

    # 3. outputSchema: sent as the Responses text format, the answer parses
    assert json.loads(result["structured"]["finalResponse"]) == {"answer": 42}
    text_format = outcome.requests[3].body["text"]["format"]
    assert (text_format["type"], text_format["schema"], text_format["strict"]) == (
        "json_schema",
        SCHEMA,
        True,
    )

    # 4. resumeThread(id) from a new Codex instance, text + local_image
    assert result["resumed"] == {"threadId": thread_id, "finalResponse": "a green square"}
    resumed_input = outcome.requests[4].body["input"]
    user_texts = [
        part.get("text")
        for item in resumed_input
        if item.get("role") == "user"
        for part in item["content"]
        if part["type"] == "input_text"
    ]
    for prompt in ("run the command", "and again", "answer as JSON", "what is in the picture?"):
        assert prompt in user_texts  # the recorded history came back on resume
    images = [
        part["image_url"]
        for item in resumed_input
        if item.get("role") == "user"
        for part in item["content"]
        if part["type"] == "input_image"
    ]
    assert len(images) == 1
    assert images[0].startswith("data:image/png;base64,")

    # 5. a failing request: the SDK rejects the turn with the server's message
    assert result["failure"] is not None
    assert FAILURE in result["failure"]

    # Every request: the SDK's apiKey (as CODEX_API_KEY), its baseUrl (-c openai_base_url),
    # the reasoning effort (-c model_reasoning_effort), the model.
    assert len(outcome.requests) == 6
    for request in outcome.requests:
        assert request.path == "/v1/responses"
        assert request.headers["authorization"] == "Bearer sk-sdk-test"
        assert request.body["model"] == "gpt-5.5"
        assert request.body["reasoning"]["effort"] == "low"


def test_the_typescript_sdk_drives_mini_codex(tmp_path: Path) -> None:
    reason = _missing(SDK, SCRIPT)
    if reason is not None:
        pytest.skip(reason)
    outcome = drive(tmp_path, MINI_CODEX, "MINI_CODEX_HOME")
    check(outcome)
    # Nothing the SDK passed here needs a warning: webSearchEnabled=false is "disabled" (what
    # mini-codex does), --add-dir under danger-full-access is already writable.
    assert outcome.stderr == ""


def test_the_same_sdk_script_passes_against_the_real_codex_cli(tmp_path: Path) -> None:
    reason = _missing(SDK, SCRIPT, CODEX)
    if reason is not None:
        pytest.skip(reason)
    check(drive(tmp_path, CODEX, "CODEX_HOME"))
