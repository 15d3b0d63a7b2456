"""Sub-agents (Codex's ``multi_agent_v1``): child agents a session spawns, messages, waits for
and closes, each a full session with its own rollout.

- ``status.py``: statuses and the texts the parent's model sees (notification, roster line);
- ``tools.py``: the five tools in Codex's namespace and schemas;
- ``control.py``: :class:`AgentControl`, a session's children, limits, waits, notifications;
- ``child.py``: a child's options (derived from its parent's) and the task serving it;
- ``section.py``: the ``multi_agent`` world-state section (and what a resume restores);
- ``wiring.py``: :func:`open_with_agents`, used by ``host.open.open_options``.

Turned on by ``features.multi_agent = true``; limits ``agents.max_threads`` (6) and
``agents.max_depth`` (1).
"""

from mini_codex.host.agents.child import Child
from mini_codex.host.agents.control import AgentControl
from mini_codex.host.agents.status import AgentStatus, notification_text, roster_line

__all__ = ["AgentControl", "AgentStatus", "Child", "notification_text", "roster_line"]
