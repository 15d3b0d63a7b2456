"""Images in the UI: ``-i FILE`` (``build_app(images=...)``) goes with the opening prompt, ``/image
PATH`` attaches one to the next message; the transcript shows "[image: name WxH]" chips and the
request carries ``input_image`` parts exactly as ``exec -i`` sends them."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import idle, png, type_and_send, wait_for

from mini_codex.models.openai_responses import request_input
from mini_codex.testing import ScriptedResponse, assistant
from mini_codex.tools.images import load_image
from mini_codex.tui.app import MiniCodexApp
from mini_codex.tui.run import ui_harness

pytestmark = pytest.mark.anyio


def data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def pending(app: MiniCodexApp) -> str:
    widget = app.query_one("#attachments", Static)
    return str(widget.content) if widget.display else ""


def last_user_request_item(harness) -> dict:
    (body_input,) = [request_input(harness.model.prompts[-1].input)]
    return [item for item in body_input if item.get("role") == "user"][-1]


async def test_slash_image_attaches_an_image_to_the_next_message(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("a green square")])])
    shot = png(3, 2)
    (harness.work / "shot.png").write_bytes(shot)
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/image shot.png")
        await wait_for(pilot, lambda: bool(pending(app)))
        assert pending(app) == (
            "[image: shot.png 3x2]  goes with your next message (/image drops it)"
        )
        await type_and_send(pilot, "what is this?")
        await wait_for(pilot, lambda: idle(app) and "a green square" in app.transcript_lines())
        assert pending(app) == ""
        assert "› what is this?\n  [image: shot.png 3x2]" in app.transcript_lines()
    assert last_user_request_item(harness) == {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": data_url(shot)},
        ],
    }


async def test_images_given_at_start_go_with_the_opening_prompt(make_harness, tmp_path) -> None:
    harness = make_harness([ScriptedResponse([assistant("two pictures")])])
    first, second = png(640, 480), png(1, 1)
    (tmp_path / "a.png").write_bytes(first)
    (tmp_path / "b.png").write_bytes(second)
    images = (load_image(tmp_path / "a.png"), load_image(tmp_path / "b.png"))
    app = harness.app(prompt="compare them", images=images)
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: idle(app) and "two pictures" in app.transcript_lines())
        assert pending(app) == ""
        assert (
            "› compare them\n  [image: a.png 640x480]\n  [image: b.png 1x1]"
            in app.transcript_lines()
        )
    assert last_user_request_item(harness)["content"] == [
        {"type": "input_text", "text": "compare them"},
        {"type": "input_image", "image_url": data_url(first)},
        {"type": "input_image", "image_url": data_url(second)},
    ]


async def test_images_given_without_a_prompt_wait_for_the_first_message(
    make_harness, tmp_path: Path
) -> None:
    harness = make_harness([ScriptedResponse([assistant("seen")])])
    (tmp_path / "a.png").write_bytes(png(2, 2))
    app = harness.app(images=(load_image(tmp_path / "a.png"),))
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        assert pending(app).startswith("[image: a.png 2x2]  goes with")
        await type_and_send(pilot, "look")
        await wait_for(pilot, lambda: idle(app) and "seen" in app.transcript_lines())
        assert "› look\n  [image: a.png 2x2]" in app.transcript_lines()
    assert len(last_user_request_item(harness)["content"]) == 2


async def test_bad_images_are_refused_with_one_line_and_slash_image_drops(make_harness) -> None:
    harness = make_harness([ScriptedResponse([assistant("plain")])])
    (harness.work / "notes.txt").write_text("hello")
    (harness.work / "ok.png").write_bytes(png(1, 1))
    app = harness.app()
    async with ui_harness(app) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/image missing.png")
        await type_and_send(pilot, "/image notes.txt")
        await type_and_send(pilot, "/image ok.png")
        await wait_for(pilot, lambda: bool(pending(app)))
        await type_and_send(pilot, "/image")
        await wait_for(pilot, lambda: pending(app) == "")
        await type_and_send(pilot, "no picture")
        await wait_for(pilot, lambda: idle(app) and "plain" in app.transcript_lines())
        work = harness.work
        assert app.transcript_lines()[-5:] == [
            f"/image: image {work}/missing.png: No such file or directory",
            f"/image: image {work}/notes.txt: unsupported format (expected PNG, JPEG, GIF or WebP)",
            "/image: dropped 1 attached image(s)",
            "› no picture",
            "plain",
        ]
    assert last_user_request_item(harness)["content"] == [
        {"type": "input_text", "text": "no picture"}
    ]
