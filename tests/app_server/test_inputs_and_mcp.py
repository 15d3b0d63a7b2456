"""Turn inputs (a local image and an image URL reach the model as ``input_image``) and MCP tool
calls (``mcpToolCall`` items from the real ``mcp-server-everything``), schema-validated."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from app_server_flow import REPO, fake, message, mini_side, reply
from app_server_schema import check_all

sys.path.insert(0, str(REPO / "tests"))

from image_files import png

EVERYTHING = REPO / "node_modules" / ".bin" / "mcp-server-everything"


def test_local_images_and_image_urls_reach_the_model(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    image = work / "shot.png"
    image.write_bytes(png(2, 2))
    with (
        fake.serve([reply([message("A green square.")], 1)]) as server,
        mini_side(tmp_path / "home", server.url).start() as client,
    ):
        client.initialize()
        thread = client.request("thread/start", {"cwd": str(work)})["thread"]["id"]
        inputs = [
            {"type": "text", "text": "what is this?"},
            {"type": "localImage", "path": str(image)},
            {"type": "image", "url": "https://example.test/a.png"},
        ]
        client.request("turn/start", {"threadId": thread, "input": inputs})
        done, seen = client.wait_method("turn/completed", timeout=60)
        bad = client.request_raw(
            "turn/start",
            {"threadId": thread, "input": [{"type": "localImage", "path": str(work / "none.png")}]},
        )
        messages, methods = list(client.messages), dict(client.sent_methods)
        body = server.requests[-1].body
    assert check_all(messages, methods) == []
    assert done["params"]["turn"]["status"] == "completed"
    users = [
        m["params"]["item"]["content"]
        for m in seen
        if m.get("method") == "item/completed" and m["params"]["item"]["type"] == "userMessage"
    ]
    assert users == [
        [
            {"type": "text", "text": "what is this?", "text_elements": []},
            {"type": "localImage", "path": str(image)},
            {"type": "image", "url": "https://example.test/a.png"},
        ]
    ]
    parts = [
        part
        for item in body["input"]
        if item.get("role") == "user"
        for part in item["content"]
        if part["type"] == "input_image"
    ]
    assert [part["image_url"][:22] for part in parts] == [
        "data:image/png;base64,",
        "https://example.test/a",
    ]
    assert bad["error"]["code"] == -32602
    assert "none.png" in bad["error"]["message"]


def test_mcp_tool_calls_are_mcp_tool_call_items(tmp_path: Path) -> None:
    if not EVERYTHING.exists() or shutil.which("node") is None:
        pytest.skip("mcp-server-everything is not installed (npm ci)")
    work = tmp_path / "work"
    work.mkdir()
    arguments = json.dumps({"message": "hello mcp"})
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1",
            "name": "mcp__everything__echo", "arguments": arguments}  # fmt: skip
    replies = [reply([call], 1), reply([message("Echoed.")], 2)]
    with fake.serve(replies) as server:
        side = mini_side(tmp_path / "home", server.url)
        config = side.env["MINI_CODEX_HOME"] + "/config.toml"
        with open(config, "a") as handle:
            handle.write(
                f'\n[mcp_servers.everything]\ncommand = "node"\n'
                f'args = ["{EVERYTHING}", "stdio"]\nrequired = true\n'
                'enabled_tools = ["echo"]\n'
            )
        with side.start() as client:
            client.initialize()
            thread = client.request(
                "thread/start",
                {"cwd": str(work), "sandbox": "danger-full-access", "approvalPolicy": "never"},
                timeout=60,
            )["thread"]["id"]
            client.request(
                "turn/start", {"threadId": thread, "input": [{"type": "text", "text": "echo"}]}
            )
            done, seen = client.wait_method("turn/completed", timeout=60)
            messages, methods = list(client.messages), dict(client.sent_methods)
    assert check_all(messages, methods) == []
    assert done["params"]["turn"]["status"] == "completed"
    items = [
        (m["method"], m["params"]["item"])
        for m in seen
        if m.get("method") in ("item/started", "item/completed")
        and m["params"]["item"]["type"] == "mcpToolCall"
    ]
    assert [(method, i["id"], i["server"], i["tool"], i["status"]) for method, i in items] == [
        ("item/started", "call_1", "everything", "echo", "inProgress"),
        ("item/completed", "call_1", "everything", "echo", "completed"),
    ]
    result = items[1][1]["result"]
    assert "hello mcp" in json.dumps(result["content"])


def test_a_skill_input_injects_its_skill_md_after_the_prompt(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    skill = work / ".agents" / "skills" / "tidy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: tidy\ndescription: Tidy the imports.\n---\nSort them.\n")
    with (
        fake.serve([reply([message("Tidied.")], 1)]) as server,
        mini_side(tmp_path / "home", server.url).start() as client,
    ):
        client.initialize()
        thread = client.request("thread/start", {"cwd": str(work)})["thread"]["id"]
        inputs = [
            {"type": "text", "text": "tidy up"},
            {"type": "skill", "name": "tidy", "path": str(skill)},
        ]
        client.request("turn/start", {"threadId": thread, "input": inputs})
        done, seen = client.wait_method("turn/completed", timeout=60)
        messages, methods = list(client.messages), dict(client.sent_methods)
        body = server.requests[-1].body
    assert check_all(messages, methods) == []
    assert done["params"]["turn"]["status"] == "completed"
    users = [
        m["params"]["item"]["content"]
        for m in seen
        if m.get("method") == "item/completed" and m["params"]["item"]["type"] == "userMessage"
    ]
    assert users[0] == [
        {"type": "text", "text": "tidy up", "text_elements": []},
        {"type": "skill", "name": "tidy", "path": str(skill)},
    ]
    texts = [
        part["text"]
        for item in body["input"]
        if item.get("role") == "user"
        for part in item["content"]
        if part["type"] == "input_text"
    ]
    prompt = texts.index("tidy up")
    assert texts[prompt + 1] == (
        f"<skill>\n<name>tidy</name>\n<path>{skill.resolve()}</path>\n{skill.read_text()}\n</skill>"
    )
