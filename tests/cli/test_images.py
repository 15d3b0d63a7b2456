"""Images: ``-i/--image`` on ``exec`` and ``resume`` (``input_image`` data URLs on the Responses
API, ``image_url`` parts on Chat Completions), the ``view_image`` tool on both wire APIs, and clear
errors for unsupported formats, missing files and oversized images."""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.tools.images import ImageError, image_data_url

REPO = Path(__file__).parents[2]
sys.path[:0] = [str(REPO / "tests" / "models")]

import fake_openai_server as fake  # noqa: E402

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
runner = CliRunner()


def png_bytes() -> bytes:
    """A real 1×1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


PNG = png_bytes()
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_image_data_url_formats_and_errors(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    assert image_data_url(tmp_path / "a.png") == DATA_URL
    (tmp_path / "b.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 20)
    assert image_data_url(tmp_path / "b.jpg").startswith("data:image/jpeg;base64,")
    (tmp_path / "c.webp").write_bytes(b"RIFF\x00\x00\x00\x00WEBPVP8 ")
    assert image_data_url(tmp_path / "c.webp").startswith("data:image/webp;base64,")
    (tmp_path / "notes.png").write_text("not an image")
    with pytest.raises(ImageError) as info:
        image_data_url(tmp_path / "notes.png")
    assert str(info.value) == (
        f"image {tmp_path / 'notes.png'}: unsupported format (expected PNG, JPEG, GIF or WebP)"
    )
    with pytest.raises(ImageError) as info:
        image_data_url(tmp_path / "a.png", max_bytes=10)
    assert str(info.value) == (
        f"image {tmp_path / 'a.png'}: {len(PNG)} bytes is larger than the 10-byte limit"
    )
    with pytest.raises(ImageError, match="No such file or directory"):
        image_data_url(tmp_path / "missing.png")


def run_exec(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "shot.png").write_bytes(PNG)
    base = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "MINI_CODEX_HOME": str(tmp_path / "home"),
    }
    return subprocess.run(
        [MINI_CODEX, "exec", "-C", str(work), "-s", "danger-full-access", *args],
        capture_output=True, text=True, env={**base, **env}, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def responses_reply(*output: dict[str, Any], n: int = 1) -> fake.Reply:
    return fake.sse_reply(
        fake.responses_events(list(output), response_id=f"resp_{n}", usage=fake.usage(10, 2))
    )


def message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}  # fmt: skip


def chat_config(tmp_path: Path, url: str) -> None:
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "config.toml").write_text(
        'model = "local-model"\nmodel_provider = "local"\n[model_providers.local]\n'
        f'name = "Local"\nbase_url = "{url}"\nwire_api = "chat"\n'
    )


def chat_reply(**kwargs: Any) -> fake.Reply:
    chunks = fake.chat_chunks(usage=fake.chat_usage(10, 2), **kwargs)
    return fake.Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)


def test_image_flag_sends_input_image_parts_on_the_responses_api(tmp_path: Path) -> None:
    with fake.serve([responses_reply(message("a green pixel"))]) as server:
        done = run_exec(tmp_path, {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-x"},
                        "-i", str(tmp_path / "work" / "shot.png"), "what is this?")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (request,) = server.requests
    assert request.body["input"][-1] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "what is this?"},
                    {"type": "input_image", "image_url": DATA_URL}],
    }  # fmt: skip


def test_image_flag_sends_image_url_parts_on_chat_completions(tmp_path: Path) -> None:
    with fake.serve([chat_reply(text="a green pixel")]) as server:
        chat_config(tmp_path, server.url)
        done = run_exec(tmp_path, {}, "--image", str(tmp_path / "work" / "shot.png"), "what?")
    assert done.returncode == 0, done.stderr
    (request,) = server.requests
    assert request.body["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "what?"},
                    {"type": "image_url", "image_url": {"url": DATA_URL}}],
    }  # fmt: skip


def test_view_image_attaches_the_file_on_the_responses_api(tmp_path: Path) -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "view_image",
            "arguments": json.dumps({"path": "shot.png"})}  # fmt: skip
    replies = [responses_reply(call), responses_reply(message("green"), n=2)]
    with fake.serve(replies) as server:
        done = run_exec(tmp_path, {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-x"}, "look")
    assert done.returncode == 0, done.stderr
    assert [tool["name"] for tool in server.requests[0].body["tools"]][-1] == "view_image"
    assert server.requests[1].body["input"][-1] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [{"type": "input_image", "image_url": DATA_URL}],
    }


def test_view_image_on_chat_follows_the_tool_message_as_a_user_image(tmp_path: Path) -> None:
    calls = [("call_1", "view_image", json.dumps({"path": "shot.png"})),
             ("call_2", "view_image", json.dumps({"path": "notes.txt"}))]  # fmt: skip
    with fake.serve([chat_reply(tool_calls=calls), chat_reply(text="green")]) as server:
        chat_config(tmp_path, server.url)
        (tmp_path / "work").mkdir()
        (tmp_path / "work" / "notes.txt").write_text("words")
        done = run_exec(tmp_path, {}, "look")
    assert done.returncode == 0, done.stderr
    messages = server.requests[1].body["messages"]
    notes = tmp_path / "work" / "notes.txt"
    assert messages[-3:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": ""},
        {"role": "tool", "tool_call_id": "call_2",
         "content": f"image {notes}: unsupported format (expected PNG, JPEG, GIF or WebP)"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": DATA_URL}}]},
    ]  # fmt: skip


def invoke(tmp_path: Path, *args: str) -> Any:
    env: dict[str, str | None] = {"MINI_CODEX_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": None}
    return runner.invoke(app, list(args), env=env)


def test_image_on_resume_and_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"output": [{"type": "message", "content": "ok"}]}) + "\n")
    model = f"scripted:{script}"
    assert invoke(tmp_path, "exec", "--model", model, "--cd", str(tmp_path), "first").exit_code == 0
    trace = tmp_path / "trace.jsonl"
    image = ["-i", str(tmp_path / "shot.png")]
    result = invoke(tmp_path, "resume", "--last", "--model", model, "--cd", str(tmp_path),
                    *image, "--trace-requests", str(trace), "second")  # fmt: skip
    assert (result.exit_code, result.stderr) == (0, "")
    (request,) = [json.loads(line) for line in trace.read_text().splitlines()]
    assert request["input"][-1]["content"] == [
        {"type": "input_text", "text": "second"},
        {"type": "input_image", "image_url": DATA_URL},
    ]
    (tmp_path / "notes.txt").write_text("words")
    result = invoke(tmp_path, "exec", "--model", model, "-i", str(tmp_path / "notes.txt"), "x")
    assert (result.exit_code, result.stdout) == (2, "")
    notes = tmp_path / "notes.txt"
    assert result.stderr == (
        f"error: image {notes}: unsupported format (expected PNG, JPEG, GIF or WebP)\n"
    )
    result = invoke(tmp_path, "exec", "--model", model, "-i", str(tmp_path / "gone.png"), "x")
    assert (result.exit_code, result.stderr) == (
        2, f"error: image {tmp_path / 'gone.png'}: No such file or directory\n")  # fmt: skip
