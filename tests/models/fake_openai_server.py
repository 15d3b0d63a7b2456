"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests (never shipped in ``src``).

It speaks both wire protocols the providers use: ``POST /v1/responses`` (Responses streaming SSE,
``event:`` + ``data:`` lines, no ``[DONE]``) and ``POST /v1/chat/completions`` (``data:`` chunks
ending with ``data: [DONE]``). Each request takes the next scripted ``Reply`` from one queue and
is recorded (``server.requests``: path, headers, query, JSON body). Replies can fail with a
status, stall (idle timeout), or be cut mid-stream: ``cut="eof"`` closes a close-delimited body
cleanly (the client sees the stream end early), ``cut="reset"`` closes before a declared
``Content-Length`` was sent (the client sees a broken connection).

Builders produce realistic event sequences from output items: ``responses_events`` (created,
in_progress, per item added / deltas / done, completed with usage) and ``chat_chunks``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

JsonDict = dict[str, Any]


@dataclass
class Reply:
    """One scripted HTTP reply."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    """Body pieces, each written and flushed separately."""
    cut: Literal["eof", "reset"] | None = None
    stall_s: float = 0.0
    """Sleep after the chunks, before ending the body (to trigger an idle timeout)."""
    delay_s: float = 0.0
    """Sleep before sending the status line (a server that accepts but does not answer)."""


@dataclass
class Recorded:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: JsonDict
    raw: bytes = b""
    """The request body exactly as received."""


# --- body builders ------------------------------------------------------------------------------


def sse(events: Sequence[JsonDict], *, named: bool = True) -> list[bytes]:
    """One chunk per event: ``event: TYPE`` (Responses) + ``data: JSON``."""
    chunks = []
    for event in events:
        head = f"event: {event['type']}\n" if named and "type" in event else ""
        chunks.append(f"{head}data: {json.dumps(event)}\n\n".encode())
    return chunks


def sse_reply(events: Sequence[JsonDict], **kwargs: Any) -> Reply:
    return Reply(headers={"content-type": "text/event-stream"}, chunks=sse(events), **kwargs)


def error_reply(status: int, error: JsonDict, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        chunks=[json.dumps({"error": error}).encode()],
    )


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _in_progress(item: JsonDict) -> JsonDict:
    started = {**item, "status": "in_progress"}
    match item["type"]:
        case "message":
            started["content"] = []
        case "reasoning":
            started["summary"] = []
            started.pop("encrypted_content", None)
        case "function_call":
            started["arguments"] = ""
        case "custom_tool_call":
            started["input"] = ""
    return started


def _item_events(index: int, item: JsonDict) -> list[JsonDict]:
    events: list[JsonDict] = []

    def add(kind: str, **fields: Any) -> None:
        events.append({"type": f"response.{kind}", "item_id": item["id"], "output_index": index,
                       **fields})  # fmt: skip

    events.append(
        {"type": "response.output_item.added", "output_index": index, "item": _in_progress(item)}
    )
    match item["type"]:
        case "message":
            for c, part in enumerate(item["content"]):
                empty = {"type": "output_text", "text": "", "annotations": []}
                add("content_part.added", content_index=c, part=empty)
                for piece in _pieces(part["text"]):
                    add("output_text.delta", content_index=c, delta=piece, logprobs=[])
                add("output_text.done", content_index=c, text=part["text"], logprobs=[])
                add("content_part.done", content_index=c, part={**empty, "text": part["text"]})
        case "reasoning":
            for s, part in enumerate(item.get("summary", [])):
                add("reasoning_summary_part.added", summary_index=s,
                    part={"type": "summary_text", "text": ""})  # fmt: skip
                for piece in _pieces(part["text"]):
                    add("reasoning_summary_text.delta", summary_index=s, delta=piece)
                add("reasoning_summary_text.done", summary_index=s, text=part["text"])
                add("reasoning_summary_part.done", summary_index=s, part=part)
        case "function_call":
            for piece in _pieces(item["arguments"]):
                add("function_call_arguments.delta", delta=piece)
            add("function_call_arguments.done", arguments=item["arguments"])
        case "custom_tool_call":
            for piece in _pieces(item["input"]):
                add("custom_tool_call_input.delta", delta=piece)
            add("custom_tool_call_input.done", input=item["input"])
    done = {**item, "status": "completed"} if item["type"] != "reasoning" else item
    events.append({"type": "response.output_item.done", "output_index": index, "item": done})
    return events


def responses_events(
    output: Sequence[JsonDict],
    *,
    response_id: str = "resp_1",
    model: str = "gpt-5.1-codex",
    usage: JsonDict | None = None,
    end_turn: bool | None = None,
    complete: bool = True,
) -> list[JsonDict]:
    """The full event sequence of one streamed response producing ``output``."""
    base = {"id": response_id, "object": "response", "created_at": 1767225600, "model": model}
    events: list[JsonDict] = [
        {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}},
        {
            "type": "response.in_progress",
            "response": {**base, "status": "in_progress", "output": []},
        },
    ]
    for index, item in enumerate(output):
        events.extend(_item_events(index, item))
    if complete:
        final: JsonDict = {**base, "status": "completed", "output": list(output)}
        if usage is not None:
            final["usage"] = usage
        if end_turn is not None:
            final["end_turn"] = end_turn
        events.append({"type": "response.completed", "response": final})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def usage(input_tokens: int, output_tokens: int, cached: int = 0, reasoning: int = 0) -> JsonDict:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def chat_chunks(
    *,
    text: str = "",
    tool_calls: Sequence[tuple[str, str, str]] = (),
    reasoning: str = "",
    usage: JsonDict | None = None,
    finish_reason: str | None = None,
    completion_id: str = "chatcmpl-1",
    cut: bool = False,
) -> list[bytes]:
    """Chat Completions stream chunks: reasoning, text and (id, name, arguments) tool calls.

    Tool-call arguments are split into fragments and the calls are interleaved by ``index``,
    as servers that stream parallel calls do. ``cut`` leaves out the finish chunk, the usage
    chunk and ``[DONE]`` (a stream cut mid-way).
    """
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "local-model",
    }

    def chunk(delta: JsonDict, finish: str | None = None) -> JsonDict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"reasoning_content": piece}) for piece in _pieces(reasoning) if piece]
    chunks += [chunk({"content": piece}) for piece in _pieces(text) if piece]
    for index, (call_id, name, _) in enumerate(tool_calls):
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
    fragments = [_pieces(arguments, 5) for _, _, arguments in tool_calls]
    for step in range(max((len(f) for f in fragments), default=0)):
        for index, pieces in enumerate(fragments):
            if step < len(pieces):
                chunks.append(
                    chunk(
                        {"tool_calls": [{"index": index, "function": {"arguments": pieces[step]}}]}
                    )
                )
    if cut:
        return sse(chunks, named=False)
    chunks.append(chunk({}, finish_reason or ("tool_calls" if tool_calls else "stop")))
    if usage is not None:
        chunks.append({**base, "choices": [], "usage": usage})
    return [*sse(chunks, named=False), b"data: [DONE]\n\n"]


def chat_usage(prompt_tokens: int, completion_tokens: int) -> JsonDict:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


# --- the server ---------------------------------------------------------------------------------


class FakeOpenAIServer:
    """Serves scripted replies in order; ``url`` is the ``base_url`` (``.../v1``)."""

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        parse_bodies: bool = True,
        refuse_websocket: bool = False,
    ) -> None:
        self.parse_bodies = parse_bodies
        """False: keep only the raw bytes (benchmarks with very large bodies)."""
        self.refuse_websocket = refuse_websocket
        """True: a websocket upgrade gets 426 Upgrade Required (the Codex CLI then uses HTTP
        at once); False: 501, as before (Codex retries the websocket ~7 s first)."""
        self.replies: deque[Reply] = deque(replies)
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if self.replies:
                return self.replies.popleft()
        return error_reply(500, {"message": "fake server: no scripted reply left"})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                # A websocket upgrade (the Codex CLI tries the Responses websocket first):
                # 426 makes it fall back to HTTP at once (any other status: ~7 s of retries).
                # Not recorded: only model requests (POST) are.
                body = b"websockets are not served here"
                self.send_response(426 if server.refuse_websocket else 501)
                self.send_header("content-length", str(len(body)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                recorded = Recorded(
                    path=parts.path,
                    query=parse_qs(parts.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=json.loads(raw) if raw and server.parse_bodies else {},
                    raw=raw,
                )
                reply = server._next(recorded)
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                body = b"".join(reply.chunks)
                time.sleep(reply.delay_s)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.cut == "reset":
                    self.send_header("content-length", str(len(body) + 10_000))
                elif reply.status != 200 or (reply.cut is None and not reply.stall_s):
                    self.send_header("content-length", str(len(body)))
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for chunk in reply.chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    if reply.stall_s:
                        time.sleep(reply.stall_s)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler


@contextmanager
def serve(
    replies: Sequence[Reply] = (), *, parse_bodies: bool = True, refuse_websocket: bool = False
) -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer(
        replies, parse_bodies=parse_bodies, refuse_websocket=refuse_websocket
    ).start()
    try:
        yield server
    finally:
        server.stop()
