"""The pre-serialized request path sends exactly the bytes of the SDK's typed ``create`` path.

The same scripted session runs twice against the local server: once through the SDK's
``create`` (``sdk_reference.py``, the reference) and once through the cached body bytes and
the SDK's raw request path. Every request body must be byte-equal, and so must the
``--trace-requests`` records. Retries (a stream cut before any item, a 5xx retried by the SDK)
resend the same body.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_openai_server import (
    Reply,
    chat_chunks,
    chat_usage,
    error_reply,
    responses_events,
    serve,
    sse_reply,
    usage,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from sdk_reference import SdkChatClient, SdkResponsesClient

from mini_codex.config import Config, ModelProviderConfig
from mini_codex.host import SessionOptions, open_options
from mini_codex.models import ModelClientOptions
from mini_codex.models.base import Prompt, TokenUsage
from mini_codex.models.chat_completions import ChatCompletionsClient
from mini_codex.models.errors import ProviderError, StreamError
from mini_codex.models.openai_responses import (
    OpenAIResponsesClient,
    encoded_request_item,
    item_shape,
    output_item,
    request_item,
    usage_from_response,
)
from mini_codex.models.openai_sdk import OpenAISdkClient
from mini_codex.models.request_body import (
    ArrayChunks,
    ChunkedBody,
    ItemBytesCache,
    dumps,
    join_array,
)
from mini_codex.models.stream_events import (
    ChatChunk,
    Choice,
    ChoiceDelta,
    ResponseCompleted,
    ResponseInfo,
    TokenDetails,
    Usage,
    decode_chat_chunk,
    decode_response_event,
    item_json,
)
from mini_codex.models.tokens import ItemTokenCache, estimate_usage
from mini_codex.models.trace_line import TraceLineEncoder
from mini_codex.protocol.items import FunctionCallOutput, parse_response_item, user_message
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

pytestmark = pytest.mark.anyio

TRICKY = 'é ü 😀 \u2028 tab\t nl\n quote" back\\ ctl\x01\x1f del\x7f ≠ 中文'


class EchoTool:
    """Echoes its text; its schema carries floats (encoded by the standard encoder)."""

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="echo",
            description=f"Echo text. {TRICKY}",
            kind="function",
            parameters={
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "ratio": {"type": "number", "minimum": 0.5, "maximum": 1e16},
                },
            },
        )

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(text=f"echo: {json.loads(payload)['text']}", success=True)


def _responses_replies() -> list[Reply]:
    replies = []
    for n in range(3):
        summary = [{"type": "summary_text", "text": f"think {n} {TRICKY}"}]
        reasoning = {"type": "reasoning", "id": f"rs_{n}", "encrypted_content": f"enc-{n}",
                     "summary": summary}  # fmt: skip
        call = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                "name": "echo", "arguments": json.dumps({"text": f"{n} {TRICKY}"})}  # fmt: skip
        replies.append(sse_reply(responses_events([reasoning, call], usage=usage(10, 2))))
    final = {"type": "message", "id": "msg_done", "role": "assistant",
             "content": [{"type": "output_text", "text": f"done {TRICKY}"}]}  # fmt: skip
    replies.append(sse_reply(responses_events([final], usage=usage(20, 1))))
    return replies


def _chat_replies() -> list[Reply]:
    def stream(chunks: list[bytes]) -> Reply:
        return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)

    replies = [
        stream(
            chat_chunks(
                text=f"step {n} {TRICKY}",
                tool_calls=[(f"call_{n}", "echo", json.dumps({"text": f"{n} {TRICKY}"}))],
            )
        )
        for n in range(3)
    ]
    replies.append(stream(chat_chunks(text=f"done {TRICKY}", usage=chat_usage(40, 1))))
    return replies


async def _run(
    tmp_path: Path, name: str, client: OpenAISdkClient, model: str
) -> tuple[list[bytes], list[bytes]]:
    """Run the scripted session; returns the request bodies' bytes and the trace records."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    traces: list[bytes] = []

    def trace(prompt: Prompt) -> None:
        # The turn and step ids are fresh uuids in every run; everything else must match.
        record = orjson.dumps(prompt.to_trace_json())
        traces.append(re.sub(rb'"(turn_id|step_id)":"[^"]*"', rb'"\1":"ID"', record))

    options = SessionOptions(
        cwd=work,
        home=tmp_path / name,
        client=client,  # type: ignore[arg-type]
        config=Config(model=model, model_reasoning_effort="high"),
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        clock=lambda: datetime(2026, 12, 1, 12, 0, tzinfo=UTC),
        tools=[RegisteredTool(EchoTool())],
        on_request=trace,
        output_schema={
            "type": "object",
            "properties": {"score": {"type": "number", "minimum": 0.25}},
        },
    )
    try:
        async with open_options(options) as session:
            await session.run_turn(f"echo three times {TRICKY}")
    finally:
        await client.aclose()
    return [], traces


async def _session_bodies(
    tmp_path: Path, name: str, replies: list[Reply], make: Any, model: str, *, sdk: bool
) -> tuple[list[bytes], list[bytes]]:
    with serve(replies) as fake:
        client = make(fake.url, sdk)
        _, traces = await _run(tmp_path, name, client, model)
        return [request.raw for request in fake.requests], traces


def _responses(url: str, sdk: bool = False) -> OpenAIResponsesClient:
    kind = SdkResponsesClient if sdk else OpenAIResponsesClient
    return kind.from_options(
        ModelClientOptions(
            model="gpt-5.1-codex", provider=ModelProviderConfig(base_url=url), api_key="sk-test"
        )
    )


def _chat(url: str, sdk: bool = False) -> ChatCompletionsClient:
    provider = ModelProviderConfig(base_url=url, wire_api="chat")
    kind = SdkChatClient if sdk else ChatCompletionsClient
    return kind.from_options(
        ModelClientOptions(model="local-model", provider_name="local", provider=provider)
    )


@pytest.mark.parametrize(
    ("make", "replies", "model"),
    [(_responses, _responses_replies, "gpt-5.1-codex"), (_chat, _chat_replies, "local-model")],
    ids=["responses", "chat"],
)
async def test_fast_path_sends_the_sdk_bytes_and_the_same_trace(
    tmp_path: Path, make: Any, replies: Any, model: str
) -> None:
    reference, reference_trace = await _session_bodies(
        tmp_path, "sdk", replies(), make, model, sdk=True
    )
    fast, fast_trace = await _session_bodies(tmp_path, "fast", replies(), make, model, sdk=False)
    assert len(reference) == 4
    assert fast == reference
    assert fast_trace == reference_trace
    body = json.loads(fast[-1])
    assert body["stream"] is True
    assert "é ü 😀 \u2028".encode() in fast[-1]  # non-ASCII as UTF-8, not \u-escaped


async def test_a_stream_cut_before_any_item_is_retried_with_the_same_body(
    tmp_path: Path,
) -> None:
    final = {"type": "message", "id": "msg_done", "role": "assistant",
             "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
    cut = responses_events([final], complete=False)[:2]  # created + in_progress only
    replies = [
        sse_reply(cut, cut="eof"),
        sse_reply(responses_events([final], usage=usage(5, 1))),
    ]
    fast, _ = await _session_bodies(
        tmp_path, "cut", replies, _responses, "gpt-5.1-codex", sdk=False
    )
    assert len(fast) == 2
    assert fast[0] == fast[1]


async def test_the_sdks_own_request_retry_resends_the_same_body(tmp_path: Path) -> None:
    final = {"type": "message", "id": "msg_done", "role": "assistant",
             "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
    replies = [
        error_reply(503, {"message": "overloaded"}),
        sse_reply(responses_events([final], usage=usage(5, 1))),
    ]
    with serve(replies) as fake:
        client = OpenAIResponsesClient.from_options(
            ModelClientOptions(
                model="gpt-5.1-codex",
                provider=ModelProviderConfig(base_url=fake.url, request_max_retries=1),
                api_key="sk-test",
            )
        )
        prompt = Prompt(model="gpt-5.1-codex", instructions="be brief",
                        input=(user_message(TRICKY),))  # fmt: skip
        try:
            events = [event async for event in client.stream(prompt)]
        finally:
            await client.aclose()
        raws = [request.raw for request in fake.requests]
        retry_counts = [request.headers.get("x-stainless-retry-count") for request in fake.requests]
        framing = [
            (request.headers.get("content-length"), request.headers.get("transfer-encoding"))
            for request in fake.requests
        ]
    assert len(events) >= 2
    assert retry_counts == ["0", "1"]
    assert raws[0] == raws[1] == client.request_bytes(prompt)
    assert framing == [(str(len(raws[0])), None)] * 2  # framed as a bytes body, not chunked


def test_items_are_encoded_once_and_reused_by_identity() -> None:
    cache: ItemBytesCache[FunctionCallOutput] = ItemBytesCache(lambda item: dumps(item.to_json()))
    history = [FunctionCallOutput(call_id=f"c{n}", output=f"out {n}") for n in range(5)]
    first = cache.encode_all(history)
    assert cache.encoded_count == 5
    synthetic = FunctionCallOutput(call_id="c9", output="aborted")
    history.append(FunctionCallOutput(call_id="c5", output="out 5"))
    second = cache.encode_all([*history[:2], synthetic, *history[2:]])
    assert cache.encoded_count == 7  # the new item and the synthetic one
    assert second == [
        *first[:2],
        dumps(synthetic.to_json()),
        *first[2:],
        dumps(history[5].to_json()),
    ]
    assert cache.encode_all(history[3:]) == [*first[3:], second[-1]]
    assert cache.encoded_count == 7


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1.5, "b": [1e16, -0.0, 2.5e-7]},
        {"big": 2**70, "ok": "x"},
        {"s": TRICKY, "n": [1, None, True, False, -7]},
    ],
)
def test_dumps_matches_the_sdk_encoding(value: Sequence[Any]) -> None:
    sdk = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    assert dumps(value) == sdk


@pytest.mark.parametrize(
    "item",
    [
        {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": "{}",
         "status": "completed"},
        {"type": "message", "id": "m", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
        {"type": "message", "id": "m", "role": "assistant", "status": "completed",
         "phase": "final_answer",
         "content": [{"type": "output_text", "text": "a", "logprobs": [],
                      "annotations": [{"type": "url_citation", "url": "https://x",
                                       "title": "x", "start_index": 0, "end_index": 1}]},
                     {"type": "output_text", "text": "b", "annotations": []}]},
        {"type": "message", "id": "m", "role": "assistant",
         "content": [{"type": "refusal", "refusal": "no"}]},
        {"type": "reasoning", "id": "r", "encrypted_content": "e",
         "summary": [{"type": "summary_text", "text": "s"}],
         "content": [{"type": "reasoning_text", "text": "t"}]},
        {"type": "reasoning", "id": "r", "summary": [{"type": "summary_text"}]},
        {"type": "web_search_call", "id": "ws", "status": "completed",
         "action": {"type": "search", "query": "q"}},
    ],
    ids=["call", "message", "message-annotated", "refusal", "reasoning", "part-without-text",
         "web-search"],
)  # fmt: skip
def test_decoded_output_items_read_like_the_sdk_models(item: dict[str, Any]) -> None:
    from openai._models import construct_type
    from openai.types.responses import ResponseOutputItem

    typed = construct_type(type_=ResponseOutputItem, value=json.loads(json.dumps(item)))
    expected = output_item(typed).to_json()
    event = decode_response_event(
        json.dumps({"type": "response.output_item.done", "item": item}).encode()
    )
    decoded = output_item(event.item).to_json()
    assert decoded == expected
    assert list(decoded) == list(expected)  # the same key order
    assert json.dumps(decoded) == json.dumps(expected)


def test_cached_token_estimates_equal_a_full_recount() -> None:
    cache = ItemTokenCache()
    history: list[Any] = [user_message(f"hello {TRICKY}")]
    for n in range(4):
        history.append(FunctionCallOutput(call_id=f"c{n}", output=f"output {n} " * (n + 1)))
        prompt = Prompt(model="gpt-5.1-codex", instructions="be brief", input=tuple(history))
        outputs = (FunctionCallOutput(call_id="x", output="y"),)
        assert estimate_usage(prompt, outputs, cache) == estimate_usage(prompt, outputs)
    shorter = Prompt(model="gpt-5.1-codex", instructions="", input=tuple(history[2:]))
    assert estimate_usage(shorter, (), cache) == estimate_usage(shorter, ())


@pytest.mark.parametrize("sizes", [[], [1], [3, 0, 5], [400_000] * 7, [2_000_000, 1, 1_500_000]])
async def test_a_chunked_body_reads_back_its_pieces_and_rewinds(sizes: list[int]) -> None:
    pieces = [bytes([65 + n % 26]) * size for n, size in enumerate(sizes)]
    body = ChunkedBody(pieces)
    assert body.length == sum(sizes)
    first = [chunk async for chunk in body]
    assert b"".join(first) == b"".join(pieces)
    assert all(len(chunk) > 0 for chunk in first)
    assert body.tell() == body.length
    assert body.seek(0) == 0
    assert body.read() == (first[0] if first else b"")
    with pytest.raises(ValueError, match="rewound to its start"):
        body.seek(5)


def _slow_request_item(item: Any) -> Any:
    data = item.to_json()
    if data.get("type") == "reasoning" and data.get("encrypted_content") is None:
        return None
    return item_shape(data, keep_id=False)


def test_request_items_read_from_attributes_equal_the_dumped_shape() -> None:
    corpus = Path(__file__).resolve().parents[1] / "fixtures" / "rollouts" / "codex"
    items: list[Any] = []
    for path in sorted(corpus.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "response_item":
                items.append(parse_response_item(record["payload"]))
    items += [
        parse_response_item({"type": "message", "role": "assistant", "phase": "commentary",
                             "id": "m1", "content": [{"type": "output_text", "text": "x",
                                                      "annotations": []}]}),
        parse_response_item({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": "data:image/png;base64,AA"}]}),
        parse_response_item({"type": "function_call_output", "call_id": "c",
                             "output": [{"type": "input_text", "text": "t"}]}),
        parse_response_item({"type": "function_call", "call_id": "c", "name": "n",
                             "arguments": "{}", "status": "completed", "namespace": "x"}),
        user_message(TRICKY),
    ]  # fmt: skip
    assert len(items) > 100
    for item in items:
        assert json.dumps(request_item(item)) == json.dumps(_slow_request_item(item)), item
        assert encoded_request_item(item) == (
            None if _slow_request_item(item) is None else dumps(_slow_request_item(item))
        )


def test_a_decoded_event_reads_like_the_constructed_sdk_model() -> None:
    from openai._models import construct_type
    from openai.types.responses import ResponseCompletedEvent

    data = {"type": "response.completed", "sequence_number": 7,
            "response": {"id": "r", "end_turn": False, "object": "response",
                         "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4,
                                   "input_tokens_details": {"cached_tokens": 2}}}}  # fmt: skip
    event = decode_response_event(json.dumps(data).encode())
    assert event == ResponseCompleted(response=ResponseInfo(id="r", end_turn=False, usage=Usage(
        input_tokens=3, output_tokens=1, total_tokens=4,
        input_tokens_details=TokenDetails(cached_tokens=2))))  # fmt: skip
    assert getattr(event.response, "error", "absent") is None
    assert usage_from_response(event.response) == TokenUsage(
        input_tokens=3, cached_input_tokens=2, output_tokens=1, total_tokens=4
    )
    assert usage_from_response(event.response) == usage_from_response(
        construct_type(type_=ResponseCompletedEvent, value=data).response
    )
    chunk = decode_chat_chunk(b'{"id": "c", "choices": [{"delta": {"content": "x"}}], "x": 1}')
    assert chunk == ChatChunk(id="c", choices=[Choice(delta=ChoiceDelta(content="x"))])
    assert chunk.choices is not None
    assert chunk.choices[0].index == 0  # a missing field: the default


def test_unknown_and_malformed_events_are_handled_as_before() -> None:
    unknown = {"type": "response.in_progress", "response": {"id": "r"}}
    assert decode_response_event(json.dumps(unknown).encode()) == unknown  # ignored
    assert decode_response_event(b'{"no_type": 1}') == {"no_type": 1}
    assert decode_response_event(b"[1, 2]") == [1, 2]
    assert decode_chat_chunk(b"5") == 5
    nan = decode_response_event(b'{"type": "response.output_text.delta", "item_id": "i", '
                                b'"delta": "d", "x": NaN}')  # fmt: skip
    assert nan == decode_response_event(b'{"type": "response.output_text.delta", '
                                        b'"item_id": "i", "delta": "d"}')  # fmt: skip
    done = decode_response_event(b'{"type": "response.output_item.done", '
                                 b'"item": {"type": "message", "z": NaN, "a": 1}}')  # fmt: skip
    assert str(item_json(done.item)) == str({"type": "message", "z": float("nan"), "a": 1})
    with pytest.raises(StreamError, match=r"^malformed response\.output_text\.delta event in "):
        decode_response_event(b'{"type": "response.output_text.delta", "delta": "d"}')
    with pytest.raises(StreamError, match=r"^malformed data in the response stream: "):
        decode_response_event(b"{not json")
    with pytest.raises(ProviderError, match=r"^boom$"):
        decode_response_event(b'{"type": "response.created", "error": {"message": "boom"}}')
    with pytest.raises(ProviderError, match=r"^boom$"):
        decode_chat_chunk(b'{"error": {"message": "boom"}}')


class _Part:
    """An immutable history stand-in: identity matters, the bytes are given."""

    def __init__(self, data: bytes | None) -> None:
        self.data = data


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(
                st.just("append"), st.lists(st.one_of(st.none(), st.binary(max_size=9)), max_size=6)
            ),
            st.tuples(st.just("replace_at"), st.integers(0, 30)),
            st.tuples(st.just("truncate"), st.integers(0, 30)),
        ),
        max_size=15,
    )
)
def test_array_chunks_join_to_the_array_whatever_the_edits(ops: list[tuple[str, Any]]) -> None:
    cache: ItemBytesCache[_Part] = ItemBytesCache(lambda part: part.data)
    chunks = ArrayChunks()
    chunks.CHUNK_BYTES = 8  # tiny chunks: every few items are frozen
    history: list[_Part] = []
    for op, arg in ops:
        if op == "append":
            history += [_Part(None if data is None else b'"' + data.hex().encode() + b'"')
                        for data in arg]  # fmt: skip
        elif op == "replace_at" and arg < len(history):
            history[arg] = _Part(b"0")
        elif op == "truncate":
            history = history[:arg]
        encoded = cache.encode_all(history)
        joined = b"".join(chunks.pieces(encoded, cache.last_prefix))
        assert joined == join_array(encoded)
        assert json.loads(joined) == [json.loads(p) for p in encoded if p is not None]


def test_trace_lines_are_the_records_bytes_with_items_encoded_once() -> None:
    encoder = TraceLineEncoder()
    properties = {
        "input": {"type": "array", "default": []},
        "tools": {"type": "number", "minimum": 0.5},
    }
    tools = ({"type": "function", "name": "f", "parameters": {"properties": properties}},)
    history: list[Any] = [user_message(f'say ,"input":[],"tools": {TRICKY}')]
    for n in range(4):
        history.append(FunctionCallOutput(call_id=f"c{n}", output=f"out {n} {TRICKY}"))
        prompt = Prompt(
            model="gpt-5.1-codex",
            instructions=f',"input":[],"tools": {TRICKY}',
            input=tuple(history),
            tools=tools,
            turn_id="t",
            step_id=f"s{n}",
            reasoning_effort="high",
            output_schema={"type": "object"} if n else None,
        )
        assert encoder.line(prompt) == orjson.dumps(prompt.to_trace_json())
    shorter = Prompt(model="m", instructions="", input=tuple(history[2:]))
    assert encoder.line(shorter) == orjson.dumps(shorter.to_trace_json())
    empty = Prompt(model="m", instructions="", input=())
    assert encoder.line(empty) == orjson.dumps(empty.to_trace_json())


async def test_a_chunked_body_iterated_again_sends_all_of_it_again() -> None:
    body = ChunkedBody([b"a" * 700_000, b"b" * 700_000, b"c"])
    first = b"".join([chunk async for chunk in body])
    again = b"".join([chunk async for chunk in body])  # e.g. httpx following a 307
    assert first == again == b"a" * 700_000 + b"b" * 700_000 + b"c"
