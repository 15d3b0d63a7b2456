"""The transcript: the scrolling column of cells (messages, streamed answers, tool calls, notes).

It is fed by the app, one session event at a time, and only displays: streamed answer text is
appended in chunks (deltas that arrive while one chunk renders join the next one), tool cells are
updated in place: a running command's cell shows the last lines of its output as they arrive
(``exec_command_output_delta``), and every cell its result when the call ends.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import AwaitMount, Widget
from textual.widgets import Collapsible, Static

from mini_codex.tui import agent_cells, cells

if TYPE_CHECKING:  # Markdown (markdown-it, pygments) and the protocol: after the first frame
    from textual.widgets import Markdown

    from mini_codex.protocol.session_events import (
        ExecCommandOutputDelta,
        ToolCallBegin,
        ToolCallEnd,
    )


def _markdown(text: str = "") -> Markdown:
    from textual.widgets import Markdown

    return Markdown(text)


class ReasoningCell(Collapsible):
    """A reasoning summary, collapsed (click or Enter expands it)."""

    def __init__(self, summary: str) -> None:
        super().__init__(Static(Text(summary, style="dim italic")), title="reasoning")
        self.summary = summary


class Transcript(VerticalScroll):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.patches: dict[str, str] = {}
        """apply_patch inputs by call id (the approval overlay shows them as diffs)."""
        self.tool_cells: dict[str, Static] = {}
        self.agent_cells: dict[str, agent_cells.AgentCell] = {}
        """A collapsible cell per child agent, by agent id."""
        self._following = False
        self.live_tails: dict[str, cells.LiveTail] = {}
        """The output so far of running commands, by call id (dropped when the call ends)."""
        self.stream: Markdown | None = None
        self._stream_text: list[str] = []
        self._stream_buffer: list[str] = []
        self._stream_mounting: AwaitMount | None = None
        self._flush_scheduled = False
        self._workspace: set[str] | None = None
        self.last_render = 0.0
        """``time.perf_counter()`` when streamed text last reached the widget (benchmarks)."""

    def add_cell(self, widget: Widget) -> AwaitMount:
        mounting = self.mount(widget)
        self.follow()
        return mounting

    def follow(self) -> None:
        """Keep the newest cell in view (after the layout has caught up)."""
        self.call_after_refresh(self.scroll_end, animate=False)

    def note(self, text: Text | str) -> None:
        self.add_cell(Static(text if isinstance(text, Text) else Text(text)))

    def error(self, message: str, next_step: str) -> None:
        self.add_cell(Static(cells.error_text(message, next_step), classes="error"))

    # --- the streamed answer -----------------------------------------------------------------

    def stream_delta(self, delta: str) -> None:
        if self.stream is None:
            self.stream = _markdown()
            self._stream_text = []
            self._stream_mounting = self.add_cell(self.stream)
        self._stream_buffer.append(delta)
        self._stream_text.append(delta)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.call_later(self._flush_stream)

    async def _flush_stream(self) -> None:
        self._flush_scheduled = False
        if self.stream is None or not self._stream_buffer:
            return
        stream = self.stream
        if self._stream_mounting is not None:  # appending before the mount would be lost
            mounting, self._stream_mounting = self._stream_mounting, None
            await mounting
        chunk = "".join(self._stream_buffer)
        self._stream_buffer.clear()
        await stream.append(chunk)
        self.follow()
        self.last_render = time.perf_counter()

    def finish_stream(self) -> None:
        if self.stream is not None and self._stream_buffer:
            self.stream.update("".join(self._stream_text))
            self._stream_buffer.clear()
            self.last_render = time.perf_counter()
        self.stream = None

    # --- items and tool calls ----------------------------------------------------------------

    def item_completed(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message" and item.get("role") == "assistant":
            text = "".join(
                part.get("text", "") for part in item.get("content", []) if isinstance(part, dict)
            )
            if self.stream is None:
                self.add_cell(_markdown(text))
            else:
                self.stream.update(text)
                self._stream_buffer.clear()
                self.stream = None
                self.last_render = time.perf_counter()
        elif kind == "reasoning":
            summary = "\n".join(
                str(part.get("text", ""))
                for part in item.get("summary", [])
                if isinstance(part, dict)
            )
            if summary.strip():
                self.add_cell(ReasoningCell(summary))

    def tool_begin(self, event: ToolCallBegin) -> None:
        self.finish_stream()
        if event.name == "update_plan":
            plan = cells.plan_text(event.payload)
            if plan is not None:
                self.add_cell(Static(plan, classes="tool"))
            return
        title = cells.tool_title(event.name, event.payload)
        if event.name == "apply_patch":
            patch = cells.patch_input(event.payload)
            self.patches[event.call_id] = patch
            title.append("\n")
            title.append_text(cells.patch_text(patch))
        cell = Static(cells.running_text(title, None), classes="tool")
        cell.title_text = title  # type: ignore[attr-defined]
        self.tool_cells[event.call_id] = cell
        self.add_cell(cell)

    def tool_output(self, event: ExecCommandOutputDelta) -> None:
        """More output of a running command: its cell shows the newest lines."""
        cell = self.tool_cells.get(event.call_id)
        if cell is None:
            return
        live = self.live_tails.get(event.call_id)
        if live is None:
            live = self.live_tails[event.call_id] = cells.LiveTail()
        live.feed(event.data())
        cell.update(cells.running_text(cell.title_text, live))  # type: ignore[attr-defined]
        self.follow()

    def tool_end(self, event: ToolCallEnd) -> None:
        live = self.live_tails.pop(event.call_id, None)
        cell = self.tool_cells.pop(event.call_id, None)
        if cell is None:
            if event.name == "update_plan" and event.success is False:
                self.note(Text(f"update_plan failed: {event.output}", style="red"))
            return
        title: Text = cell.title_text  # type: ignore[attr-defined]
        result = cells.tool_result(
            event.name, event.output, event.success, event.duration_s, event.details
        )
        seen = live.text() if live is not None else ""
        if seen and event.details is None:  # no output in the result (interrupted): keep the tail
            result = Text.assemble((seen + "\n", "dim"), result)
        cell.update(Text.assemble(title, "\n", result))
        if event.name == agent_cells.PREFIX + "spawn_agent" and event.success is not False:
            self._agent_spawned(event)
        self.follow()

    def _agent_spawned(self, event: ToolCallEnd) -> None:
        """A collapsible cell that follows the new child (``agent_cells``)."""
        collab = (event.details or {}).get("collab") or {}
        session = getattr(self.app, "session", None)
        agents = getattr(session, "agents", None)
        for agent_id in collab.get("receiver_thread_ids") or ():
            child = agents.children.get(agent_id) if agents is not None else None
            cell = agent_cells.AgentCell(
                agent_id, child.nickname if child else None, str(collab.get("prompt") or "")
            )
            self.agent_cells[agent_id] = cell
            self.add_cell(cell)
        if agents is not None and not self._following:
            self._following = True
            self.run_worker(agent_cells.follow_agents(agents, self.agent_cells), exclusive=False)

    def workspace(self, files: set[str] | None) -> None:
        """The workspace file set of a new step: a one-line note of what changed since the last
        one (None: a new session, no note until the next step)."""
        previous, self._workspace = self._workspace, files
        if previous is None or files is None:
            return
        note = cells.workspace_note(sorted(files - previous), sorted(previous - files))
        if note is not None:
            self.add_cell(Static(note))

    def lines(self) -> list[str]:
        """The transcript as plain text, one entry a cell (tests and debugging)."""
        from textual.widgets import Markdown

        lines: list[str] = []
        for widget in self.children:
            if isinstance(widget, Markdown):
                lines.append(widget.source)
            elif isinstance(widget, ReasoningCell):
                lines.append(f"{widget.title}: {widget.summary}")
            elif isinstance(widget, agent_cells.AgentCell):
                lines.append(str(widget.title))
            elif isinstance(widget, Static):
                lines.append(str(widget.content))
        return lines
