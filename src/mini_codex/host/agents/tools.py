"""The ``multi_agent_v1`` tools: ``spawn_agent``, ``send_input``, ``resume_agent``, ``wait_agent``
and ``close_agent``, in Codex 0.169's namespace, names and argument schemas (recorded from the
real CLI: ``tests/fixtures/codex_subagents/tool_search_output.json``; the descriptions are ours).

Each tool validates its arguments, asks the session's :class:`~.control.AgentControl` and answers
with Codex's compact JSON (``{"agent_id", "nickname"}``, ``{"submission_id"}``, ``{"status"}``,
``{"status": {ID: STATUS}, "timed_out"}``, ``{"previous_status"}``). A refusal (limits, unknown
agent, bad arguments) is a failed output with one line saying why. ``details["collab"]`` carries
what ``exec --json`` prints as a ``collab_tool_call`` item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol

from pydantic import BaseModel, ConfigDict

from mini_codex.errors import MiniCodexError
from mini_codex.host.agents.status import PENDING_INIT, AgentStatus, compact_json
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec, parse_arguments

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mini_codex.host.agents.child import Child, Prompt


class AgentControl(Protocol):
    """The operations the tools ask of the session's ``control.AgentControl``."""

    async def spawn(
        self, prompt: Prompt, *, model: str | None = None, reasoning_effort: str | None = None
    ) -> Child: ...

    async def send_input(self, target: str, prompt: Prompt, *, interrupt: bool) -> str: ...

    async def resume(self, agent_id: str) -> AgentStatus: ...

    async def wait(
        self, targets: Sequence[str], timeout_s: float
    ) -> tuple[dict[str, AgentStatus], bool]: ...

    async def close(self, target: str) -> AgentStatus: ...

    def status(self, agent_id: str) -> AgentStatus: ...


__all__ = ["NAMESPACE", "NAMESPACE_DESCRIPTION", "agent_tools"]

NAMESPACE: Final = "multi_agent_v1"
NAMESPACE_DESCRIPTION: Final = "Tools for spawning and managing sub-agents."
WAIT_DEFAULT_MS: Final = 30_000
WAIT_MIN_MS: Final = 10_000
WAIT_MAX_MS: Final = 3_600_000

_ITEM_FIELDS = {
    "audio_url": "Audio data URL when type is audio.",
    "image_url": "Image URL when type is image.",
    "name": "Display name when type is skill or mention.",
    "path": "Path when type is local_image/local_audio/skill, or structured mention target such "
    "as app://<connector-id> or plugin://<plugin-name>@<marketplace-name> when type is mention.",
    "text": "Text content when type is text.",
    "type": "Input item type: text, image, local_image, audio, local_audio, skill, or mention.",
}
_ITEMS: Final = {
    "type": "array",
    "description": "Structured input items. Use this to pass explicit mentions (for example "
    "app:// connector paths).",
    "items": {
        "type": "object",
        "properties": {k: {"type": "string", "description": d} for k, d in _ITEM_FIELDS.items()},
        "additionalProperties": False,
    },
}


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SpawnArgs(_Args):
    message: str | None = None
    items: list[dict[str, Any]] | None = None
    agent_type: str | None = None
    fork_context: bool = False
    model: str | None = None
    reasoning_effort: str | None = None
    service_tier: str | None = None


class SendArgs(_Args):
    target: str
    message: str | None = None
    items: list[dict[str, Any]] | None = None
    interrupt: bool = False


class ResumeArgs(_Args):
    id: str


class WaitArgs(_Args):
    targets: list[str]
    timeout_ms: float | None = None


class CloseArgs(_Args):
    target: str


def _prompt(message: str | None, items: list[dict[str, Any]] | None) -> str | list[Any]:
    """The input the child gets: the message, or the items (exactly one of them)."""
    if message is not None and items is not None:
        raise MiniCodexError("Provide either message or items, not both")
    if message is not None:
        if not message.strip():
            raise MiniCodexError("Empty message can't be sent to an agent")
        return message
    if not items:
        raise MiniCodexError("Provide one of: message or items")
    return items


def _display(prompt: str | list[Any]) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(str(item.get("text") or item.get("path") or "") for item in prompt)


class _AgentTool:
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[dict[str, Any]] = {}

    def __init__(self, control: AgentControl) -> None:
        self.control = control
        self._spec = ToolSpec(
            name=f"{NAMESPACE}__{self.name}",
            description=self.description,
            kind="function",
            parameters=self.parameters,
            supports_parallel=False,  # one at a time, in call order, as Codex runs them
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        try:
            return await self.run(payload, ctx)
        except MiniCodexError as error:
            return ToolOutput.failure(str(error))

    async def run(self, payload: str, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError

    def _answer(
        self, value: Any, receivers: list[str], states: dict[str, AgentStatus], prompt: str | None
    ) -> ToolOutput:
        collab = {
            "tool": "wait" if self.name == "wait_agent" else self.name,
            "receiver_thread_ids": receivers,
            "prompt": prompt,
            "agents_states": {key: status.item_state() for key, status in states.items()},
        }
        return ToolOutput(text=compact_json(value), success=True, details={"collab": collab})


class SpawnAgent(_AgentTool):
    name = "spawn_agent"
    description = (
        "Start a sub-agent on a well-scoped task; it runs in parallel with you and returns its "
        "id and nickname. It inherits your model unless `model` is given. Only spawn agents "
        "when the user (or AGENTS.md / a skill) asks for sub-agents or parallel agent work. "
        "When it finishes, a notification with its final status arrives; close it with "
        "close_agent when it is no longer needed."
    )
    parameters = _schema(
        {
            "fork_context": {
                "type": "boolean",
                "description": "True forks the current thread history into the new agent; "
                "false or omitted starts with only the initial prompt.",
            },
            "items": _ITEMS,
            "message": _string(
                "Initial plain-text task for the new agent. Use either message or items."
            ),
            "model": _string(
                "Model override for the new agent. Omit unless an explicit override is needed."
            ),
            "reasoning_effort": _string(
                "Reasoning effort override for the new agent. Omit to inherit the parent effort."
            ),
        }
    )

    async def run(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments(self.name, SpawnArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        if args.fork_context:
            if args.agent_type or args.model or args.reasoning_effort:
                raise MiniCodexError(
                    "a forked agent keeps the parent's role, model and reasoning effort"
                )
            raise MiniCodexError("fork_context is not supported by mini-codex yet")
        prompt = _prompt(args.message, args.items)
        agent = await self.control.spawn(
            prompt, model=args.model, reasoning_effort=args.reasoning_effort
        )
        answer = {"agent_id": agent.id, "nickname": agent.nickname}
        # The status at creation, as Codex reports it (the child may be running already).
        return self._answer(answer, [agent.id], {agent.id: PENDING_INIT}, _display(prompt))


class SendInput(_AgentTool):
    name = "send_input"
    description = (
        "Send a message to an existing agent. By default it is queued until the agent's "
        "current task ends; interrupt=true stops that task and handles the message at once. "
        "Reuse an agent this way when a new task depends on the context of its previous one."
    )
    parameters = _schema(
        {
            "interrupt": {
                "type": "boolean",
                "description": "True interrupts the current task and handles this message "
                "immediately; false or omitted queues it.",
            },
            "items": _ITEMS,
            "message": _string(
                "Legacy plain-text message to send to the agent. Use either message or items."
            ),
            "target": _string("Agent id to message (from spawn_agent)."),
        },
        ["target"],
    )

    async def run(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments(self.name, SendArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        prompt = _prompt(args.message, args.items)
        submission = await self.control.send_input(args.target, prompt, interrupt=args.interrupt)
        states = {args.target: self.control.status(args.target)}
        return self._answer({"submission_id": submission}, [args.target], states, _display(prompt))


class ResumeAgent(_AgentTool):
    name = "resume_agent"
    description = (
        "Reopen a closed agent by id (its history is restored from its rollout) so it can "
        "get send_input and wait_agent calls again."
    )
    parameters = _schema({"id": _string("Agent id to resume.")}, ["id"])

    async def run(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments(self.name, ResumeArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        status = await self.control.resume(args.id)
        return self._answer({"status": status.to_wire()}, [args.id], {args.id: status}, None)


class WaitAgent(_AgentTool):
    name = "wait_agent"
    description = (
        "Wait until one of the given agents reaches a final status (completed, with its final "
        "message; errored; shut down; not found) and return the final statuses; an empty "
        "status map means the wait timed out. The same final status also arrives as a "
        "notification message."
    )
    parameters = _schema(
        {
            "targets": {
                "type": "array",
                "description": "Agent ids to wait on. Pass multiple ids to wait for whichever "
                "finishes first.",
                "items": {"type": "string"},
            },
            "timeout_ms": {
                "type": "number",
                "description": f"Timeout in milliseconds. Defaults to {WAIT_DEFAULT_MS}, min "
                f"{WAIT_MIN_MS}, max {WAIT_MAX_MS}. Prefer longer waits (minutes) to avoid "
                "busy polling.",
            },
        },
        ["targets"],
    )

    async def run(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments(self.name, WaitArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        if not args.targets:
            raise MiniCodexError("agent ids must be non-empty")
        timeout_ms = WAIT_DEFAULT_MS if args.timeout_ms is None else args.timeout_ms
        timeout_ms = min(max(timeout_ms, WAIT_MIN_MS), WAIT_MAX_MS)
        statuses, timed_out = await self.control.wait(args.targets, timeout_ms / 1000)
        answer = {
            "status": {key: status.to_wire() for key, status in statuses.items()},
            "timed_out": timed_out,
        }
        return self._answer(answer, list(statuses) or list(args.targets), statuses, None)


class CloseAgent(_AgentTool):
    name = "close_agent"
    description = (
        "Close an agent (and its open descendants) that is no longer needed; returns the "
        "status it had before. Completed agents stay open, and count toward the limit of "
        "open agents, until they are closed."
    )
    parameters = _schema({"target": _string("Agent id to close (from spawn_agent).")}, ["target"])

    async def run(self, payload: str, ctx: ToolContext) -> ToolOutput:
        args = parse_arguments(self.name, CloseArgs, payload)
        if isinstance(args, ToolOutput):
            return args
        previous = await self.control.close(args.target)
        answer = {"previous_status": previous.to_wire()}
        return self._answer(answer, [args.target], {args.target: previous}, None)


def agent_tools(control: AgentControl) -> list[RegisteredTool]:
    """The five tools, in Codex's order, advertised in one ``multi_agent_v1`` namespace."""
    return [
        RegisteredTool(
            cls(control),
            namespace=NAMESPACE,
            namespace_description=NAMESPACE_DESCRIPTION,
            wire_name=cls.name,
            wire_description=NAMESPACE_DESCRIPTION,
        )
        for cls in (SpawnAgent, SendInput, ResumeAgent, WaitAgent, CloseAgent)
    ]
