"""Where model-visible history and the rollout are written together, in call order.

``Recording`` appends items to the ContextManager and, in the same call, queues their
``response_item`` lines on the rollout recorder, so history and rollout never disagree about
order. World-state and turn-context lines go through ``record_lines``. Callers keep the ordering
invariant I1: items first, then the ``world_state`` line describing them, then ``turn_context``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mini_codex.context import ContextManager
from mini_codex.protocol import ResponseItem, ResponseItemLine, RolloutLine
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

    async def record_items(self, items: Sequence[ResponseItem]) -> None:
        if not items:
            return
        self.history.record_items(items)
        if self.recorder is not None:
            await self.recorder.record([ResponseItemLine(payload=item) for item in items])
        for item in items:
            self._emit(ItemCompleted(turn_id=self.turn_id, item=item.to_json()))

    async def record_lines(self, lines: Sequence[RolloutLine]) -> None:
        if lines and self.recorder is not None:
            await self.recorder.record(lines)

    def history_for_prompt(self) -> list[ResponseItem]:
        return self.history.for_prompt()

    def emit(self, event: SessionEvent) -> None:
        self._emit(event)
