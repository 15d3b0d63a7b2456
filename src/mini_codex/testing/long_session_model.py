"""``LongSessionModel``: an offline ``ModelClient`` that answers forever, for long-session tests
and benchmarks (hundreds or thousands of turns, with compactions at unpredictable points).

Per request, looking only at the prompt:

* the last input item is the compact prompt (a compaction's summarization request) → an
  assistant message ``summary #N: ...`` of ``summary_words`` words;
* the last input item is a user message, and this is every ``tool_every``-th such request → one
  ``function_call`` of ``tool_name`` with ``tool_arguments`` (so turns take a second step);
* otherwise → an assistant message of ``answer_words`` words.

It reports no token usage (the runtime estimates it offline, as for providers that report none).
Deterministic: the same prompts get the same answers. Keeps counters, not prompts, so memory does
not grow with the session.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio.lowlevel

from mini_codex.context.compaction import SUMMARIZATION_PROMPT
from mini_codex.models.base import (
    Completed,
    Created,
    ModelEvent,
    OutputItemAdded,
    OutputItemDone,
    Prompt,
)
from mini_codex.protocol.items import FunctionCall, Message, ResponseItem, assistant_message
from mini_codex.protocol.items import message_text as _text

__all__ = ["LongSessionModel"]

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def _words(count: int, seed: int) -> str:
    return " ".join(_WORDS[(seed + index) % len(_WORDS)] for index in range(count))


@dataclass
class LongSessionModel:
    answer_words: int = 40
    summary_words: int = 120
    tool_every: int = 0
    """0: never call a tool."""
    tool_name: str = "shell"
    tool_arguments: dict[str, Any] = field(default_factory=lambda: {"command": ["true"]})
    compact_prompt: str = SUMMARIZATION_PROMPT
    requests: int = 0
    summaries: int = 0
    user_turns: int = 0

    async def aclose(self) -> None:
        return None

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        self.requests += 1
        number = self.requests
        last = prompt.input[-1] if prompt.input else None
        item: ResponseItem
        if isinstance(last, Message) and last.role == "user" and _text(last) == self.compact_prompt:
            self.summaries += 1
            text = f"summary #{self.summaries}: " + _words(self.summary_words, number)
            item = assistant_message(text).model_copy(update={"id": f"msg_{number}"})
        elif isinstance(last, Message) and last.role == "user":
            self.user_turns += 1
            if self.tool_every and self.user_turns % self.tool_every == 0:
                item = FunctionCall(
                    id=f"fc_{number}",
                    call_id=f"call_{number}",
                    name=self.tool_name,
                    arguments=json.dumps(self.tool_arguments),
                )
            else:
                text = f"answer #{number}: " + _words(self.answer_words, number)
                item = assistant_message(text).model_copy(update={"id": f"msg_{number}"})
        else:
            text = f"answer #{number}: " + _words(self.answer_words, number)
            item = assistant_message(text).model_copy(update={"id": f"msg_{number}"})
        yield Created(f"resp_{number}")
        yield OutputItemAdded(item)
        await anyio.lowlevel.checkpoint()
        yield OutputItemDone(item)
        yield Completed(f"resp_{number}")
