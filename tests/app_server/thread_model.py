"""A model server that answers each request by what the request is, not by arrival order.

Many threads run at once against one server, so a queue of replies would hand one thread's reply
to another. ``ThreadModelServer`` reads the request instead: the user message ``thread K: N
commands`` (optionally ``fail``) and how many ``function_call_output`` items the input has so far
(``n``) decide the reply: the next command ``echo K-n`` (call id ``call_K_n``) while ``n < N``, then
the message ``thread K done``; ``fail`` answers HTTP 400; anything else (a compaction request) gets
``summary``. The same replies serve ours and the real Codex (``exec_command`` calls).
"""

from __future__ import annotations

import json
import re
from typing import Any

import fake_openai_server as fake

JsonDict = dict[str, Any]
_ASK = re.compile(r"thread (\d+): (\d+) commands?( fail)?")


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for part in value for text in _texts(part)]
    if isinstance(value, dict):
        return [text for part in value.values() for text in _texts(part)]
    return []


def answer(body: JsonDict) -> fake.Reply:
    items = body.get("input") or []
    asks = [m for text in _texts(items) for m in [_ASK.search(text)] if m]
    if not asks:
        return _reply([_message("summary")], "r-summary")
    ask = asks[-1]
    thread, count, fail = int(ask.group(1)), int(ask.group(2)), ask.group(3)
    if fail:
        return fake.error_reply(400, {"message": f"thread {thread} was told to fail"})
    done = sum(1 for item in items if item.get("type") == "function_call_output")
    if done < count:
        arguments = json.dumps({"cmd": f"echo {thread}-{done}", "yield_time_ms": 30000})
        call = {"type": "function_call", "id": f"fc_{thread}_{done}",
                "call_id": f"call_{thread}_{done}", "name": "exec_command",
                "arguments": arguments}  # fmt: skip
        return _reply([call], f"r{thread}-{done}")
    return _reply([_message(f"thread {thread} done")], f"r{thread}-end")


def _message(text: str) -> JsonDict:
    return {"type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


def _reply(output: list[JsonDict], response_id: str) -> fake.Reply:
    events = fake.responses_events(output, response_id=response_id, usage=fake.usage(100, 5))
    return fake.sse_reply(events)


class ThreadModelServer(fake.FakeOpenAIServer):
    def _next(self, recorded: fake.Recorded) -> fake.Reply:
        with self._lock:
            self.requests.append(recorded)
        return answer(recorded.body)
