"""ToolCallRuntime: dispatch of the tool calls of one sampling request.

* A call starts the moment its item arrives (``handle_tool_call``), while the stream continues.
* Parallel-capable tools share the read side of one lock; all others take the write side.
* Calls execute against the step that advertised them (its router and context), whatever happens
  to the session meanwhile.
* ``outputs()`` returns the outputs in call order. Cancelled or unfinished calls get the aborted
  outputs of spec/codex-runtime.md §5.4 (and an ``on_end`` notice); tool failures and unknown
  tools are answered to the model, never raised.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskGroup

from mini_codex.protocol import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
)
from mini_codex.protocol.session_events import ExecCommandOutputDelta
from mini_codex.runtime.output_deltas import coalesced_output
from mini_codex.runtime.rwlock import RWLock
from mini_codex.runtime.tool_router import ToolRouter
from mini_codex.tools.base import ToolContext, ToolOutput

ToolCallItem = FunctionCall | CustomToolCall
ToolOutputItem = FunctionCallOutput | CustomToolCallOutput

_SHELL_LIKE = frozenset({"shell", "shell_command", "exec_command"})


def aborted_output_text(tool_name: str, elapsed_s: float) -> str:
    """The model-visible output of a call aborted by cancellation (§5.4)."""
    secs = max(elapsed_s, 0.1)
    shown = math.floor(secs * 10 + 0.5) / 10
    if tool_name in _SHELL_LIKE:
        return f"Wall time: {shown:.1f} seconds\naborted by user"
    return f"aborted by user after {shown:.1f}s"


def call_name(call: ToolCallItem) -> str:
    """The flat tool name a call addresses (``<namespace>__<name>`` for a namespaced call)."""
    return call.qualified_name if isinstance(call, FunctionCall) else call.name


def output_item(call: ToolCallItem, text: str | list[dict[str, Any]]) -> ToolOutputItem:
    if isinstance(call, CustomToolCall):
        return CustomToolCallOutput(call_id=call.call_id, output=text)
    return FunctionCallOutput(call_id=call.call_id, output=text)


class _Pending(msgspec.Struct):
    call: ToolCallItem
    started: float
    done: anyio.Event = msgspec.field(default_factory=anyio.Event)
    result: ToolOutput | None = None
    finished_at: float | None = None


class ToolCallRuntime:
    def __init__(
        self,
        router: ToolRouter,
        context_for: Callable[[ToolCallItem], ToolContext],
        task_group: TaskGroup,
        *,
        on_begin: Callable[[ToolCallItem], None] | None = None,
        on_end: Callable[[ToolCallItem, ToolOutput, float], None] | None = None,
        on_output_delta: Callable[[ExecCommandOutputDelta], None] | None = None,
        unavailable: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``on_output_delta`` gets the coalesced live output of running commands
        (``runtime/output_deltas.py``), always before the call's ``on_end``. ``unavailable``
        maps the namespace of each MCP server the step left out (still starting, failed, needs
        login) to its note: a call into one is answered with that note, not "unsupported call"."""
        self._router = router
        self._unavailable: Mapping[str, str] = unavailable or {}
        self._context_for = context_for
        self._tg = task_group
        self._lock = RWLock()
        self._pending: list[_Pending] = []
        self._on_begin = on_begin
        self._on_end = on_end
        self._on_output_delta = on_output_delta
        self._clock = clock

    def handle_tool_call(self, call: ToolCallItem) -> None:
        """Start dispatching ``call`` now; its output is collected by ``outputs``."""
        pending = _Pending(call=call, started=self._clock())
        self._pending.append(pending)
        if self._on_begin is not None:
            self._on_begin(call)
        self._tg.start_soon(self._run, pending)

    async def _run(self, pending: _Pending) -> None:
        call = pending.call
        try:
            pending.result = await self._dispatch(call)
        finally:
            pending.finished_at = self._clock()
            pending.done.set()
        if self._on_end is not None and pending.result is not None:
            self._on_end(call, pending.result, pending.finished_at - pending.started)

    def _unavailable_note(self, call: ToolCallItem, name: str) -> str | None:
        """The note of the left-out server ``call`` is addressed to (namespaced or flat name)."""
        namespace = getattr(call, "namespace", None)
        if namespace is not None:
            return self._unavailable.get(namespace)
        for prefix, note in self._unavailable.items():
            if name.startswith(prefix + "__"):
                return note
        return None

    async def _dispatch(self, call: ToolCallItem) -> ToolOutput:
        name = call_name(call)
        tool = self._router.lookup(name)
        if tool is None:
            note = self._unavailable_note(call, name)
            if note is not None:
                return ToolOutput(text=note, success=False)
            kind = "custom tool call" if isinstance(call, CustomToolCall) else "call"
            return ToolOutput(text=f"unsupported {kind}: {name}", success=False)
        wants_custom = tool.spec.kind == "custom"
        if wants_custom != isinstance(call, CustomToolCall):
            return ToolOutput(text=f"tool {name} invoked with incompatible payload", success=False)
        payload = call.input if isinstance(call, CustomToolCall) else call.arguments
        ctx = self._context_for(call)
        lock = self._lock.read() if tool.spec.supports_parallel else self._lock.write()
        async with lock:
            try:
                if self._on_output_delta is None:
                    return await tool.call(payload, ctx)
                async with coalesced_output(
                    call.call_id, self._on_output_delta, self._tg
                ) as deltas:
                    ctx = msgspec.structs.replace(ctx, on_output=deltas.feed)
                    return await tool.call(payload, ctx)
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:  # a tool bug must not take the turn down
                return ToolOutput(text=f"tool {name} failed: {exc}", success=False)

    @property
    def calls(self) -> list[ToolCallItem]:
        return [p.call for p in self._pending]

    async def wait_all(self) -> None:
        for pending in self._pending:
            await pending.done.wait()

    def outputs(self) -> list[ToolOutputItem]:
        """Outputs in call order (call after ``wait_all``).

        A call that ended without a result (cancelled, or never started) gets the aborted output,
        once: it becomes the call's result and ``on_end`` is told about it (a failure).
        """
        now = self._clock()
        items: list[ToolOutputItem] = []
        for pending in self._pending:
            if pending.result is None:
                elapsed = (pending.finished_at or now) - pending.started
                text = aborted_output_text(call_name(pending.call), elapsed)
                pending.result = ToolOutput.failure(text)
                if self._on_end is not None:
                    self._on_end(pending.call, pending.result, elapsed)
            result = pending.result
            items.append(
                output_item(pending.call, list(result.content) if result.content else result.text)
            )
        return items
