"""``ScriptedModel``: a deterministic, offline ``ModelClient`` that plays back scripted responses.

Each ``stream(prompt)`` records the prompt and consumes the next script entry:

* ``ScriptedResponse(output, end_turn=None, usage=None)`` streams, in order, ``Created``; per item
  ``OutputItemAdded`` (with an empty body, as the Responses API sends it), the body deltas
  (``OutputTextDelta`` per text part of an assistant message, ``ReasoningSummaryDelta`` per summary
  part of a reasoning item, one ``ToolCallInputDelta`` for a custom tool call's input) and
  ``OutputItemDone`` (the complete item); then ``Completed``.
* ``ScriptedFailure(error, output=())`` raises ``error`` (the entry is consumed). With ``output``
  it first streams ``Created`` and those items, as a stream cut mid-way does; without, it raises
  before ``Created``, as a refused request does.

Items without ids get deterministic ones from the request number N (1-based) and the item index I:
``msg_N_I``, ``rs_N_I``, ``fc_N_I`` / ``ctc_N_I`` and call ids ``call_N_I`` (an empty ``call_id``
means "assign one"). Running out of script raises a non-retryable ``ModelError``.

The script-file format for ``--model scripted:PATH`` lives in ``testing.script_file``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import anyio.lowlevel
import orjson

from mini_codex.errors import ModelError
from mini_codex.models import base
from mini_codex.models.base import ModelEvent, Prompt, TokenUsage
from mini_codex.protocol.items import (
    CustomToolCall,
    FunctionCall,
    Message,
    OutputText,
    Reasoning,
    ResponseItem,
    assistant_message,
)

assistant = assistant_message
"""Build an assistant message item (re-export of ``protocol.assistant_message``)."""


@dataclass(frozen=True, init=False)
class ScriptedResponse:
    """One successful model response."""

    output: tuple[ResponseItem, ...]
    end_turn: bool | None
    usage: TokenUsage | None
    response_id: str | None

    def __init__(
        self,
        output: Sequence[ResponseItem] = (),
        *,
        end_turn: bool | None = None,
        usage: TokenUsage | None = None,
        response_id: str | None = None,
    ) -> None:
        object.__setattr__(self, "output", tuple(output))
        object.__setattr__(self, "end_turn", end_turn)
        object.__setattr__(self, "usage", usage)
        object.__setattr__(self, "response_id", response_id)


@dataclass(frozen=True, init=False)
class ScriptedFailure:
    """A model request that fails with ``error``, optionally after streaming ``output``."""

    error: ModelError
    output: tuple[ResponseItem, ...]

    def __init__(self, error: ModelError, output: Sequence[ResponseItem] = ()) -> None:
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "output", tuple(output))


ScriptStep: TypeAlias = ScriptedResponse | ScriptedFailure


class ScriptedModel:
    """A ``ModelClient`` that plays a fixed list of responses, one per request."""

    def __init__(self, responses: Sequence[ScriptStep], *, name: str = "scripted") -> None:
        self._script: tuple[ScriptStep, ...] = tuple(responses)
        self._next = 0
        self._closed = False
        self.name = name
        """Shown in errors (the script file path when loaded from a file)."""
        self.prompts: list[Prompt] = []
        """Every prompt received, in request order (including ones that failed)."""

    @property
    def remaining(self) -> int:
        """Script entries not consumed yet."""
        return len(self._script) - self._next

    async def aclose(self) -> None:
        self._closed = True

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        if self._closed:
            raise ModelError(f"{self.name}: model client is closed")
        self.prompts.append(prompt)
        request = len(self.prompts)
        if self._next >= len(self._script):
            raise ModelError(
                f"{self.name}: scripted model has no response left for request #{request} "
                f"(script has {len(self._script)} responses)"
            )
        step = self._script[self._next]
        self._next += 1
        match step:
            case ScriptedResponse():
                response_id = step.response_id or f"resp_{request}"
                yield base.Created(response_id)
                for event in _item_events(step.output, request):
                    await anyio.lowlevel.checkpoint()
                    yield event
                await anyio.lowlevel.checkpoint()
                yield base.Completed(response_id, usage=step.usage, end_turn=step.end_turn)
            case ScriptedFailure():
                if step.output:
                    yield base.Created(f"resp_{request}")
                    for event in _item_events(step.output, request):
                        await anyio.lowlevel.checkpoint()
                        yield event
                    await anyio.lowlevel.checkpoint()
                raise step.error


def _item_events(items: Sequence[ResponseItem], request: int) -> Iterator[ModelEvent]:
    for index, raw in enumerate(items):
        item = with_ids(raw, request, index)
        yield base.OutputItemAdded(_skeleton(item))
        match item:
            case Message():
                for part in item.content:
                    if isinstance(part, OutputText):
                        yield base.OutputTextDelta(item.id, part.text)
            case Reasoning():
                for summary in item.summary:
                    text = summary.get("text")
                    if isinstance(text, str):
                        yield base.ReasoningSummaryDelta(item.id, text)
            case CustomToolCall():
                yield base.ToolCallInputDelta(item.call_id, item.input)
            case _:
                pass
        yield base.OutputItemDone(item)


def with_ids(item: ResponseItem, request: int, index: int) -> ResponseItem:
    """``item`` with a deterministic ``id`` / ``call_id`` where it has none."""
    suffix = f"{request}_{index}"
    update: dict[str, Any] = {}
    match item:
        case Message() if item.id is None:
            update["id"] = f"msg_{suffix}"
        case Reasoning() if item.id is None:
            update["id"] = f"rs_{suffix}"
        case FunctionCall() | CustomToolCall():
            prefix = "fc" if isinstance(item, FunctionCall) else "ctc"
            if item.id is None:
                update["id"] = f"{prefix}_{suffix}"
            if not item.call_id:
                update["call_id"] = f"call_{suffix}"
        case _:
            pass
    return item.model_copy(update=update) if update else item


def _skeleton(item: ResponseItem) -> ResponseItem:
    """The item as ``response.output_item.added`` carries it: body empty, to be streamed."""
    match item:
        case Message():
            return item.model_copy(update={"content": []})
        case Reasoning():
            return item.model_copy(update={"summary": []})
        case FunctionCall():
            return item.model_copy(update={"arguments": ""})
        case CustomToolCall():
            return item.model_copy(update={"input": ""})
        case _:
            return item


# --- item helpers ---------------------------------------------------------------------------------


def function_call(
    name: str, arguments: dict[str, Any] | str, call_id: str | None = None
) -> FunctionCall:
    """A function tool call; a dict of arguments is encoded as compact JSON."""
    encoded = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    return FunctionCall(name=name, arguments=encoded, call_id=call_id or "")


def custom_tool_call(name: str, input: str, call_id: str | None = None) -> CustomToolCall:
    """A freeform tool call (for example ``apply_patch`` with a raw patch)."""
    return CustomToolCall(name=name, input=input, call_id=call_id or "")


def reasoning(summary_text: str) -> Reasoning:
    """A reasoning item with one summary part."""
    return Reasoning(summary=[{"type": "summary_text", "text": summary_text}])
