"""Stand-ins for Ollama and LM Studio on 127.0.0.1 (random port), for tests only.

Each serves its server's own model-list endpoints with the shapes those servers answer
(Ollama: ``GET /api/tags``, ``POST /api/show``; LM Studio: ``GET /api/v0/models``) and an
OpenAI-compatible ``POST /v1/chat/completions`` that streams one scripted reply. Requests are
recorded as ``(method, path, json body)``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Kind = Literal["ollama", "lmstudio"]


@dataclass
class StandIn:
    kind: Kind
    models: list[dict[str, Any]]
    """Ollama: entries of /api/tags plus ``capabilities`` and ``context_length`` for /api/show.
    LM Studio: entries of /api/v0/models."""
    reply: str = '{"message": "hello from the stand-in"}'
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    root: str = ""

    @property
    def base_url(self) -> str:
        return self.root + "/v1"


def _chat_body(text: str) -> bytes:
    base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 1,
            "model": "m"}  # fmt: skip
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**base, "choices": [],
         "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}},
    ]  # fmt: skip
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, value: Any, status: int = 200) -> None:
            self._send(status, json.dumps(value).encode())

        def do_GET(self) -> None:
            state.requests.append(("GET", self.path, None))
            if state.kind == "ollama" and self.path == "/api/tags":
                tags = [
                    {k: v for k, v in m.items() if k not in ("capabilities", "context_length")}
                    for m in state.models
                ]
                self._json({"models": tags})
            elif state.kind == "lmstudio" and self.path == "/api/v0/models":
                self._json({"object": "list", "data": state.models})
            else:
                self._json({"error": "not found"}, 404)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"null")
            state.requests.append(("POST", self.path, body))
            if state.kind == "ollama" and self.path == "/api/show":
                model = next((m for m in state.models if m["name"] == body.get("model")), None)
                if model is None:
                    self._json({"error": "model not found"}, 404)
                    return
                self._json(
                    {
                        "capabilities": model.get("capabilities", ["completion"]),
                        "model_info": {
                            "general.architecture": "llama",
                            "llama.context_length": model.get("context_length", 4096),
                        },
                    }
                )
            elif self.path == "/v1/chat/completions":
                self._send(200, _chat_body(state.reply), "text/event-stream")
            else:
                self._json({"error": "not found"}, 404)

    return Handler


@contextmanager
def stand_in(kind: Kind, models: list[dict[str, Any]], **fields: Any) -> Iterator[StandIn]:
    state = StandIn(kind, models, **fields)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.root = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
