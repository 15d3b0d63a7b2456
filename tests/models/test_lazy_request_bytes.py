"""A resumed history kept lazy (raw JSON, ``context.lazy``) gives the same prompt and the same
request bytes as the history built into typed items.

Law: for any rollout of response items, resuming it into a ``ContextManager`` (lazy) and into
one holding the replayed items as typed items (eager), then appending the same items to both,
``for_prompt()``, ``items``, the messages the world-state diff reads and the Responses request
bytes (fresh client, and a client that already sent the lazy prompt) are equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_codex.context import ContextManager, PromptItems
from mini_codex.models import request_body
from mini_codex.models.base import Prompt
from mini_codex.models.openai_responses import (
    OpenAIResponsesClient,
    encoded_request_item,
    encoded_request_json,
)
from mini_codex.models.request_body import ArrayChunks
from mini_codex.protocol.items import ResponseItem, parse_response_item
from mini_codex.rollout.resume import load_resume_state
from mini_codex.world_state.state import InputTexts, input_texts

TEXT = st.sampled_from(
    ["", "ok", 'é "q" \\ \n 中文 😀', "<environment_context>x</environment_context>"]
)
CALL_IDS = st.sampled_from(["c1", "c2", "c3"])


def _any_order(value: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``value`` with its keys in any order (a rollout's writer may put ``type`` anywhere)."""
    return st.permutations(list(value.items())).map(dict)


def _content(role: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    kind = "output_text" if role == "assistant" else "input_text"
    part = st.builds(lambda text: {"type": kind, "text": text}, TEXT)
    if role == "user":
        image = st.just({"type": "input_image", "image_url": "data:image/png;base64,AA"})
        part = part | image
    else:
        part = part | st.builds(lambda text: {"type": "refusal", "refusal": text}, TEXT)
    return st.lists(part.flatmap(_any_order), min_size=1, max_size=3)


def _message() -> st.SearchStrategy[dict[str, Any]]:
    def build(role: str, data: st.DataObject) -> dict[str, Any]:
        item: dict[str, Any] = {"type": "message", "role": role}
        if data.draw(st.booleans()):
            item["id"] = "msg_1"
        if role == "assistant" and data.draw(st.booleans()):
            item["phase"] = "commentary"
        item["content"] = data.draw(_content(role))
        return item

    return st.builds(build, st.sampled_from(["user", "assistant", "developer"]), st.data())


ITEMS = st.one_of(
    _message(),
    st.builds(
        lambda call_id, text: {"type": "function_call", "id": "fc", "name": "shell",
                               "arguments": json.dumps({"cmd": text}), "call_id": call_id},
        CALL_IDS, TEXT,
    ),
    st.builds(
        lambda call_id, text: {"type": "function_call_output", "call_id": call_id,
                               "output": text},
        CALL_IDS, TEXT,
    ),
    st.builds(
        lambda call_id, text: {"type": "function_call_output", "call_id": call_id,
                               "output": [{"type": "input_text", "text": text}]},
        CALL_IDS, TEXT,
    ),
    st.builds(
        lambda call_id, text: {"type": "custom_tool_call", "id": "ct", "status": "completed",
                               "call_id": call_id, "name": "apply_patch", "input": text},
        CALL_IDS, TEXT,
    ),
    st.builds(
        lambda call_id, text: {"type": "custom_tool_call_output", "call_id": call_id,
                               "output": text},
        CALL_IDS, TEXT,
    ),
    st.builds(
        lambda encrypted, text: {"type": "reasoning", "id": "rs",
                                 "summary": [{"type": "summary_text", "text": text}],
                                 **({"encrypted_content": "enc"} if encrypted else {})},
        st.booleans(), TEXT,
    ),
    st.builds(
        lambda call_id: {"type": "local_shell_call", "id": "ls", "call_id": call_id,
                         "status": "completed",
                         "action": {"type": "exec", "command": ["true"]}},
        CALL_IDS,
    ),
    st.just({"type": "web_search_call", "id": "ws", "status": "completed",
             "action": {"type": "search", "query": "q"}}),
    st.just({"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
    st.just({"type": "future_item", "x": [1, 2.5, None]}),
).flatmap(_any_order)  # fmt: skip


def _write_rollout(path: Path, items: list[dict[str, Any]]) -> None:
    meta = {"id": "thread-1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w",
            "originator": "test", "cli_version": "0.0.0"}  # fmt: skip
    lines = [{"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": meta}]
    lines += [
        {"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item", "payload": item}
        for item in items
    ]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def _client() -> OpenAIResponsesClient:
    return OpenAIResponsesClient.__new__(OpenAIResponsesClient)  # encodes only, sends nothing


def _prompt(items: Any) -> Prompt:
    return Prompt(model="gpt-5.5", instructions="be brief", input=items)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    history=st.lists(ITEMS, min_size=1, max_size=14),
    appended=st.lists(ITEMS, max_size=3),
)
def test_a_lazy_resumed_history_prompts_and_encodes_like_the_typed_one(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    history: list[dict[str, Any]],
    appended: list[dict[str, Any]],
) -> None:
    monkeypatch.setattr(ArrayChunks, "CHUNK_BYTES", 64)  # reused chunks even in small bodies
    monkeypatch.setattr(request_body, "LINE_BATCH", 3)  # batches of lines, some not all fast
    path = tmp_path / "rollout.jsonl"
    _write_rollout(path, history)
    lazy = ContextManager()
    lazy.replace(load_resume_state(path).history)
    eager = ContextManager(list(load_resume_state(path).history))
    sent = _client()
    first = lazy.for_prompt()
    assert first == eager.for_prompt()
    assert sent.request_bytes(_prompt(first)) == _client().request_bytes(
        _prompt(tuple(eager.for_prompt()))
    )
    tail: list[ResponseItem] = [parse_response_item(item) for item in appended]
    lazy.record_items(tail)
    eager.record_items(tail)
    assert len(lazy) == len(eager)
    later, expected = lazy.for_prompt(), tuple(eager.for_prompt())
    assert later == eager.for_prompt()
    assert tuple(later) == expected
    body = _client().request_bytes(_prompt(expected))
    assert sent.request_bytes(_prompt(later)) == body  # the same client, its caches warm
    assert _client().request_bytes(_prompt(later)) == body
    retained = lazy._retained_history()  # what the world-state diff reads: the input texts
    texts = retained.read() if isinstance(retained, InputTexts) else input_texts(retained)
    assert texts == input_texts(eager.items)
    assert eager._retained_history() == list(eager.items)
    assert lazy.items == eager.items
    # The same law on the input itself, balanced or not: a lazy prefix encodes like its items.
    raw, typed = load_resume_state(path).history, tuple(load_resume_state(path).history)
    assert _client().request_bytes(_prompt(PromptItems(raw, tail))) == _client().request_bytes(
        _prompt((*typed, *tail))
    )
    lazy.remove_first_item()  # typed from here on: the same client still sends the right bytes
    eager.remove_first_item()
    edited = tuple(eager.for_prompt())
    assert sent.request_bytes(_prompt(tuple(lazy.for_prompt()))) == _client().request_bytes(
        _prompt(edited)
    )


def test_a_balanced_resumed_history_stays_lazy_until_an_edit_needs_typed_items(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rollout.jsonl"
    call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "done"}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    _write_rollout(path, [user, call, output])
    history = ContextManager()
    history.replace(load_resume_state(path).history)
    prompt = history.for_prompt()
    assert isinstance(prompt, PromptItems)
    assert prompt == tuple(parse_response_item(item) for item in (user, call, output))
    history.remove_first_item()  # an edit: typed from now on
    assert history.for_prompt() == [parse_response_item(call), parse_response_item(output)]
    assert not isinstance(history.for_prompt(), PromptItems)


@given(item=ITEMS)
def test_request_bytes_from_json_equal_the_typed_items_bytes(item: dict[str, Any]) -> None:
    typed = parse_response_item(item)
    assert encoded_request_json(typed.to_json()) == encoded_request_item(typed)


CORPUS = sorted(
    (Path(__file__).resolve().parents[1] / "fixtures" / "rollouts" / "codex").glob("*.jsonl")
)


def test_codex_rollouts_resumed_lazily_encode_like_their_typed_items() -> None:
    assert len(CORPUS) >= 5
    for path in CORPUS:
        raw, typed = load_resume_state(path).history, tuple(load_resume_state(path).history)
        assert len(raw) > 0, path
        lazy_bytes = _client().request_bytes(_prompt(PromptItems(raw, ())))
        assert lazy_bytes == _client().request_bytes(_prompt(typed)), path
