"""Where model-visible history and the rollout are written together, in call order.

``Recording`` appends items to the ContextManager and, in the same call, queues their
``response_item`` lines on the rollout recorder, so history and rollout never disagree about
order. World-state and turn-context lines go through ``record_lines``. Callers keep the ordering
invariant I1: items first, then the ``world_state`` line describing them, then ``turn_context``.

Tool outputs longer than ``tool_output_token_limit`` tokens (config, default 10,000) are cut to
their head and tail around a marker before they reach history and the rollout, so one huge output
cannot fill the context window (the live ``tool_call_end`` event still carries all of it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mini_codex.context import ContextManager
from mini_codex.models.tokens import truncate_middle
from mini_codex.protocol import ResponseItem, ResponseItemLine, RolloutLine
from mini_codex.protocol.items import CustomToolCallOutput, FunctionCallOutput
from mini_codex.protocol.session_events import ItemCompleted, SessionEvent
from mini_codex.rollout.recorder import RolloutRecorder


class Recording:
    def __init__(
        self,
        history: ContextManager,
        recorder: RolloutRecorder | None,
        emit: Callable[[SessionEvent], None],
    ) -> None:
        self.history = history
        self.recorder = recorder
        self._emit = emit
        self.turn_id = ""
        self.tool_output_token_limit: int | None = None
        self.model = "gpt-5"
        """The model whose tokenizer measures tool outputs."""

    async def record_items(self, items: Sequence[ResponseItem], *, quiet: bool = False) -> None:
        """Append ``items`` to history and the rollout; ``quiet`` emits no ``item_completed``
        (a compaction's summarizer output is not a turn item)."""
        if not items:
            return
        if self.tool_output_token_limit is not None:
            items = [self._truncated(item) for item in items]
        self.history.record_items(items)
        if self.recorder is not None:
            await self.recorder.record([ResponseItemLine(payload=item) for item in items])
        if not quiet:
            for item in items:
                self._emit(ItemCompleted(turn_id=self.turn_id, item=item.to_json()))

    def _truncated(self, item: ResponseItem) -> ResponseItem:
        limit = self.tool_output_token_limit
        if (
            limit is None
            or not isinstance(item, FunctionCallOutput | CustomToolCallOutput)
            or not isinstance(item.output, str)
        ):
            return item
        text = truncate_middle(item.output, limit, self.model)
        return item if text is item.output else item.model_copy(update={"output": text})

    async def record_lines(self, lines: Sequence[RolloutLine]) -> None:
        if lines and self.recorder is not None:
            await self.recorder.record(lines)

    def history_for_prompt(self) -> Sequence[ResponseItem]:
        return self.history.for_prompt()

    def emit(self, event: SessionEvent) -> None:
        self._emit(event)
