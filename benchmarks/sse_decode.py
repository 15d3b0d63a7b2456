"""Per-event cost of reading a stream's events: msgspec structs against orjson + views.

One turn's worth of Responses events (``response.created``, a message item added, ``deltas``
text deltas, the item done, ``response.completed`` with usage) and of Chat Completions chunks
(``deltas`` content chunks and a last chunk with ``finish_reason`` and usage) is decoded and
mapped to ``ModelEvent``s two ways:

* new: ``stream_events.decode_response_event`` / ``decode_chat_chunk`` (what the providers do);
* old: ``sse.decode_json`` + ``sse.event_failure`` + ``_View`` (the attribute view over the
  decoded JSON that ``models/sse_view.py`` was before issue 23, reproduced here).

Both sides must produce the same ``ModelEvent``s (checked first). Prints the per-event
microseconds of each side (best of ``--rounds``) and their ratio as a final JSON line.

    uv run python benchmarks/sse_decode.py [--deltas 1000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import orjson

from mini_codex.models.chat_completions import _Accumulator
from mini_codex.models.openai_responses import _map_event
from mini_codex.models.sse import decode_json, event_failure
from mini_codex.models.stream_events import decode_chat_chunk, decode_response_event


class _View:
    """The old ``sse_view.SseView``: attribute reads over one decoded JSON object."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return _view(self._data[name])
        except KeyError:
            raise AttributeError(name) from None

    @property
    def model_extra(self) -> dict[str, Any]:
        return self._data

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self._data


def _view(value: Any) -> Any:
    if isinstance(value, dict):
        return _View(value)
    if isinstance(value, list):
        return [_view(element) for element in value]
    return value


def _old_decode(data: bytes) -> Any:
    value = decode_json(data)
    failure = event_failure(value)
    if failure is not None:
        raise failure
    return _view(value)


def responses_events(deltas: int) -> list[bytes]:
    item = {"type": "message", "id": "m1", "role": "assistant", "status": "in_progress"}
    text = {"type": "output_text", "text": "word " * deltas, "annotations": []}
    done = {**item, "status": "completed", "content": [text]}
    usage = {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1000},
             "output_tokens": deltas, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 1200 + deltas}  # fmt: skip
    events: list[dict[str, Any]] = [
        {"type": "response.created", "sequence_number": 0,
         "response": {"id": "resp_1", "object": "response", "status": "in_progress"}},
        {"type": "response.in_progress", "sequence_number": 1, "response": {"id": "resp_1"}},
        {"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
         "item": {**item, "content": []}},
    ]  # fmt: skip
    for n in range(deltas):
        events.append({"type": "response.output_text.delta", "sequence_number": 3 + n,
                       "item_id": "m1", "output_index": 0, "content_index": 0,
                       "delta": "word ", "logprobs": []})  # fmt: skip
    events.append({"type": "response.output_item.done", "output_index": 0, "item": done})
    events.append({"type": "response.completed", "response": {"id": "resp_1", "usage": usage,
                   "end_turn": True, "output": [done]}})  # fmt: skip
    return [orjson.dumps(event) for event in events]


def chat_chunks(deltas: int) -> list[bytes]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"content": "word "}, "finish_reason": None}]}
        for _ in range(deltas)
    ]
    usage = {"prompt_tokens": 1200, "completion_tokens": deltas, "total_tokens": 1200 + deltas}
    chunks.append(
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage}
    )
    return [orjson.dumps(chunk) for chunk in chunks]


def run_responses(events: list[bytes], decode: Callable[[bytes], Any]) -> list[Any]:
    mapped: list[Any] = []
    outputs: list[Any] = []
    for data in events:
        event, completed = _map_event(decode(data), outputs, {})
        mapped.append(completed if event is None else event)
    return mapped


def run_chat(chunks: list[bytes], decode: Callable[[bytes], Any]) -> list[Any]:
    acc = _Accumulator(custom_tools=frozenset())
    mapped: list[Any] = []
    for data in chunks:
        mapped.extend(acc.feed(decode(data)))
    return [*mapped, *acc.output_items(), acc.usage, acc.finished]


def best_us(run: Callable[[], Any], events: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best / events * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    events, chunks = responses_events(args.deltas), chat_chunks(args.deltas)
    new_r, old_r = run_responses(events, decode_response_event), run_responses(events, _old_decode)
    new_c, old_c = run_chat(chunks, decode_chat_chunk), run_chat(chunks, _old_decode)
    if new_r != old_r or new_c != old_c:
        raise SystemExit("the two paths mapped the events differently")
    figures: dict[str, Any] = {"responses_events": len(events), "chat_chunks": len(chunks)}
    for name, stream, run, new, old in (
        ("responses", events, run_responses, decode_response_event, _old_decode),
        ("chat", chunks, run_chat, decode_chat_chunk, _old_decode),
    ):
        new_us = best_us(lambda s=stream, r=run, d=new: r(s, d), len(stream), args.rounds)
        old_us = best_us(lambda s=stream, r=run, d=old: r(s, d), len(stream), args.rounds)
        figures[f"{name}_msgspec_us_per_event"] = round(new_us, 3)
        figures[f"{name}_view_us_per_event"] = round(old_us, 3)
        figures[f"{name}_speedup"] = round(old_us / new_us, 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
