"""A session against the local OpenAI-protocol server whose reported usage crosses the
auto-compaction limit mid-turn, and again at the start of a turn after a resume: Codex 0.169's
line order, a clean ``rollout verify`` and the request inputs after each compaction."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_openai_server import FakeOpenAIServer, responses_events, serve, sse_reply, usage
from test_openai_session_retry import EchoTool

from mini_codex.config import Config, ModelProviderConfig
from mini_codex.context.contextual import is_user_input_message
from mini_codex.host import Session, SessionOptions, open_options
from mini_codex.models import ModelClientOptions
from mini_codex.models.openai_responses import OpenAIResponsesClient
from mini_codex.protocol import (
    CompactedLine,
    Message,
    ResponseItemLine,
    TurnContextLine,
    WorldStateLine,
)
from mini_codex.protocol.session_events import ContextCompacted, SessionEvent
from mini_codex.rollout.reader import read_rollout
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.rollout.resume import replay_file
from mini_codex.runtime.tool_router import RegisteredTool

pytestmark = pytest.mark.anyio

WINDOW = 20_000  # auto-compaction limit: 18,000


def message(text: str, item_id: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def reply(output: list[dict[str, Any]], total: int, response_id: str) -> Any:
    return sse_reply(responses_events(output, response_id=response_id, usage=usage(total - 20, 20)))


def shape(items: list[dict[str, Any]]) -> list[str]:
    """role:first-words of each message, the type of anything else."""
    out = []
    for item in items:
        if item.get("type") != "message":
            out.append(item["type"])
            continue
        text = item["content"][0].get("text", "")
        out.append(f"{item['role']}:{text[:24]}")
    return out


async def run(
    tmp_path: Path, fake: FakeOpenAIServer, prompts: list[str], resume: Path | None = None
) -> tuple[Session, list[SessionEvent]]:
    client = OpenAIResponsesClient.from_options(
        ModelClientOptions(
            model="gpt-5.1-codex", provider=ModelProviderConfig(base_url=fake.url), api_key="k"
        )
    )
    (tmp_path / "work").mkdir(exist_ok=True)
    events: list[SessionEvent] = []
    options = SessionOptions(
        cwd=tmp_path / "work",
        home=tmp_path / "home",
        client=client,
        config=Config(model="gpt-5.1-codex", model_context_window=WINDOW),
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        on_event=events.append,
        tools=[RegisteredTool(EchoTool())],
        resume_path=resume,
    )
    try:
        async with open_options(options) as session:
            for text in prompts:
                await session.run_turn(text)
    finally:
        await client.aclose()
    return session, events


def compaction_blocks(path: Path) -> list[list[str]]:
    """For each ``compacted`` line: the line before it, then the lines after it up to the next
    model output or user input (``event_msg`` lines left out; re-injected context items shown
    as ``context``)."""
    lines = list(read_rollout(path).lines)
    blocks = []
    for index, line in enumerate(lines):
        if not isinstance(line, CompactedLine):
            continue
        before = lines[index - 1]
        assert isinstance(before, ResponseItemLine)
        block = [f"assistant:{before.payload.to_json()['content'][0]['text']}", "compacted"]
        for later in lines[index + 1 :]:
            match later:
                case WorldStateLine(payload=payload):
                    block.append("world_state full" if payload.full else "world_state patch")
                case TurnContextLine():
                    block.append("turn_context")
                case ResponseItemLine(payload=Message(role="developer" | "user") as item) if (
                    not is_user_input_message(item)
                ):
                    block.append("context")
                case ResponseItemLine(payload=item):
                    block.append(shape([item.to_json()])[0])
                    break
                case _:
                    pass
        blocks.append(block)
    return blocks


async def test_usage_over_the_limit_mid_turn_and_after_resume_compacts_like_codex(
    tmp_path: Path,
) -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_echo", "name": "echo"}
    call["arguments"] = json.dumps({"text": "x"})
    replies = [
        reply([message("hi", "m1")], 1_000, "r1"),
        reply([call], 19_000, "r2"),  # over the limit with a tool call to follow up
        reply([message("summary one", "m3")], 2_000, "r3"),
        reply([message("done", "m4")], 18_500, "r4"),  # over the limit at the end of the turn
    ]
    with serve(replies) as fake:
        first, events = await run(tmp_path, fake, ["warm up", "first task"])
        after_mid_turn = fake.requests[3].body["input"]
    assert [(e.trigger, e.window_number) for e in events if isinstance(e, ContextCompacted)] == [
        ("mid_turn", 1)
    ]
    assert shape(after_mid_turn) == [
        "user:warm up",
        "developer:<permissions instruction",
        "user:<environment_context>\n  ",
        "user:first task",
        "user:Another model worked on ",
    ]
    path = first.rollout_path
    assert path is not None

    with serve(
        [
            reply([message("summary two", "m5")], 1_500, "r5"),
            reply([message("ok", "m6")], 900, "r6"),
        ]
    ) as fake:
        resumed, events = await run(tmp_path, fake, ["second task"], resume=path)
        summarize, request = (r.body["input"] for r in fake.requests)
    assert [(e.trigger, e.window_number) for e in events if isinstance(e, ContextCompacted)] == [
        ("pre_turn", 2)
    ]
    assert shape(summarize)[-1].startswith("user:Your context window")
    # Pre-turn compaction does not inject: the turn start re-injects the full initial context
    # right before the new input (spec/codex-runtime.md §8.4).
    assert shape(request) == [
        "user:warm up",
        "user:first task",
        "user:Another model worked on ",
        "developer:<permissions instruction",
        "user:<environment_context>\n  ",
        "user:second task",
    ]
    assert "summary two" in request[2]["content"][0]["text"]
    assert request[3:5] == after_mid_turn[1:3]  # the same full initial context, once

    assert compaction_blocks(path) == [
        [
            "assistant:summary one",
            "compacted",
            "world_state full",
            "turn_context",
            "assistant:done",
        ],
        [
            "assistant:summary two",
            "compacted",
            "context",
            "context",
            "world_state full",
            "turn_context",
            "user:second task",
        ],
    ]
    rollout = read_rollout(path)
    assert check_rollout(rollout.lines, line_numbers=rollout.line_numbers).violations == []
    verify = await anyio.run_process(
        [str(Path(sys.executable).parent / "mini-codex"), "rollout", "verify", str(path)],
        check=False,
    )
    assert verify.returncode == 0
    assert verify.stdout.decode().endswith("hold; 2 compaction(s)\n")
    # `rollout replay --json` history == what the last request carried (the new turn's input
    # and answer are the only items after it).
    replayed = replay_file(path).to_json()["history"]
    assert replayed == [*request, resumed.history.items[-1].to_json()]
