"""The interactive UI's view of sub-agents (``host/agents``): tool-call titles and results, one
collapsible cell per child that follows its status, and the ``/agents`` list.

- :func:`agent_title` / :func:`agent_result`: the cell of a ``multi_agent_v1`` call
  (``⇉ spawn_agent: task…``, ``✓ Sagan completed: answer``);
- :class:`AgentCell`: collapsed, titled ``agent NICKNAME · STATUS``; expanded, the child's id,
  its task and its last message. :func:`follow_agents` updates every cell at each status change
  of the session's children;
- :func:`agents_text`: what ``/agents`` prints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from rich.text import Text
from textual.widgets import Collapsible, Static

__all__ = ["PREFIX", "AgentCell", "agent_result", "agent_title", "agents_text", "follow_agents"]

PREFIX: Final = "multi_agent_v1__"


def _arguments(payload: str) -> dict[str, Any]:
    try:
        value = json.loads(payload or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _clip(text: str, width: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def agent_title(name: str, payload: str) -> Text:
    tool = name.removeprefix(PREFIX)
    args = _arguments(payload)
    detail = args.get("message") or args.get("target") or args.get("id") or ""
    if tool == "wait_agent":
        detail = ", ".join(str(t) for t in args.get("targets") or [])
    return Text.assemble(("⇉ ", "bold cyan"), (tool, "bold"), ": " if detail else "",
                         _clip(str(detail)))  # fmt: skip


def _status_text(state: dict[str, Any]) -> str:
    status, message = str(state.get("status")), state.get("message")
    return f"{status}: {_clip(str(message), 60)}" if message else status


def agent_result(output: str, success: bool | None, details: dict[str, Any] | None) -> Text:
    collab = (details or {}).get("collab")
    if success is False or not isinstance(collab, dict):
        return Text(f"✗ {_clip(output, 80)}", style="red")
    states = collab.get("agents_states") or {}
    if not states:
        return Text("✓ timed out, no agent finished", style="yellow")
    parts = [f"{agent_id[-8:]} {_status_text(state)}" for agent_id, state in states.items()]
    return Text("✓ " + "; ".join(parts), style="green")


class AgentCell(Collapsible):
    """One child agent: collapsed, its nickname and status; expanded, its task and answer."""

    def __init__(self, agent_id: str, nickname: str | None, task: str) -> None:
        self.agent_id = agent_id
        self.nickname = nickname or agent_id
        self.agent_task = task
        self.body = Static(self._body("pending_init", None))
        super().__init__(self.body, title=f"agent {self.nickname} · pending_init")

    def _body(self, status: str, message: str | None) -> Text:
        text = Text.assemble(("id ", "dim"), self.agent_id, "\n", ("task ", "dim"), self.agent_task)
        if message:
            text.append(f"\n{status}: ", style="bold")
            text.append(message)
        return text

    def show(self, status: str, message: str | None) -> None:
        self.title = f"agent {self.nickname} · {status}"
        self.body.update(self._body(status, message))


async def follow_agents(agents: Any, cells: dict[str, AgentCell]) -> None:
    """Keep ``cells`` in step with ``agents`` (an ``AgentControl``) until cancelled."""
    while True:
        for agent_id, cell in cells.items():
            child = agents.children.get(agent_id)
            if child is not None:
                cell.show(child.status.kind, child.status.message)
        await agents.changed()


def agents_text(children: Iterable[Any]) -> Text:
    listed = list(children)
    if not listed:
        return Text("no sub-agents in this session")
    text = Text("sub-agents\n", style="bold")
    for child in listed:
        state = "open" if child.open else "closed"
        status = child.status.kind + (f": {_clip(child.status.message, 50)}"
                                      if child.status.message else "")  # fmt: skip
        text.append(f"  {child.nickname or '-':<12} {child.id}  {state:<6} {status}\n")
    text.rstrip()
    return text
