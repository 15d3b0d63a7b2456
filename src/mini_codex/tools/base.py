"""The tool contract: what the model sees (``ToolSpec``), what a call gets (``ToolContext``), what
it returns (``ToolOutput``), and the ``Tool`` protocol every built-in, MCP or user tool implements.

A tool never raises for bad input: malformed arguments and failures come back as a ``ToolOutput``
with ``success=False`` and text that tells the model what to fix. Exceptions are for bugs and for
cancellation (which the runtime turns into the aborted outputs of spec §5.4).
What does not belong here: routing, the parallel/serial lock, recording outputs (``runtime/``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

import msgspec
from pydantic import BaseModel, ValidationError

from mini_codex.environments.manager import EnvironmentSnapshot
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.sandbox.bwrap import SandboxAvailability
from mini_codex.sandbox.launch import SandboxRequest
from mini_codex.tools.approvals import Approvals

__all__ = [
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolSpec",
    "format_validation_error",
    "load_tool_prompt",
    "parse_arguments",
]

_M = TypeVar("_M", bound=BaseModel)


class ToolSpec(msgspec.Struct, frozen=True):
    """What the model is told about a tool."""

    name: str
    description: str
    kind: Literal["function", "custom"]
    parameters: dict[str, Any] | None = None
    """JSON schema of the arguments object (function tools)."""
    format: dict[str, Any] | None = None
    """Input format of a custom (freeform) tool, e.g. a Lark grammar; None means free text."""
    supports_parallel: bool = False
    """Whether calls may run concurrently with other parallel-capable calls (read lock)."""

    @classmethod
    def function(
        cls, name: str, parameters: dict[str, Any], *, supports_parallel: bool = False
    ) -> ToolSpec:
        """A function tool described by its shipped prompt, ``tools/prompts/<name>.md``."""
        description = load_tool_prompt(f"{name}.md")
        return cls(name, description, "function", parameters, supports_parallel=supports_parallel)

    def to_responses_tool(self) -> dict[str, Any]:
        """The Responses API ``tools`` entry."""
        if self.kind == "function":
            return {
                "type": "function",
                "name": self.name,
                "description": self.description,
                "strict": False,
                "parameters": self.parameters or {"type": "object", "properties": {}},
            }
        tool: dict[str, Any] = {
            "type": "custom",
            "name": self.name,
            "description": self.description,
        }
        if self.format is not None:
            tool["format"] = self.format
        return tool


class ToolContext(msgspec.Struct, frozen=True):
    """Everything a tool call may depend on besides its payload."""

    cwd: Path
    """The turn's working directory (absolute)."""
    sandbox: SandboxPolicy
    call_id: str
    turn_id: str
    step_id: str
    shell: str = "/bin/bash"
    """The user's shell (``$SHELL``, read by ``cli/``)."""
    sandbox_tmp: Path | None = None
    """A per-session temporary directory that is writable under ``workspace-write``."""
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    """The exact environment of child processes (``cli/`` decides what is inherited)."""
    never_writable: tuple[Path, ...] = ()
    """Paths no sandboxed command or patch may write (``$MINI_CODEX_HOME``)."""
    sandbox_backend: SandboxAvailability | None = None
    """The OS sandbox that works here (detected once per session); None: detect on use."""
    allow_unsandboxed: bool = False
    """``sandbox.allow_unsandboxed``: run unconfined when no OS sandbox works."""
    approval_policy: ApprovalPolicy = "on-request"
    approvals: Approvals | None = None
    """Asks the user and records safety decisions; None: no one to ask (requests are denied)."""
    environments: EnvironmentSnapshot | None = None
    """The step's environments (issue 26 hook): routed tools resolve ``environment_id`` here;
    None means the classic single local environment."""
    on_output: Callable[[bytes], None] | None = None
    """Sees a running command's output as it is read (a front end's live tail); must not block.
    Tools that run commands pass it on (``sandbox.exec.run_command(on_output=...)``)."""

    def sandbox_request(self, backend: SandboxAvailability) -> SandboxRequest:
        """What ``sandbox.launch.confine`` needs for a command of this call."""
        return SandboxRequest(
            policy=self.sandbox,
            cwd=self.cwd,
            backend=backend,
            env=self.env,
            never_writable=self.never_writable,
            sandbox_tmp=self.sandbox_tmp,
            allow_unsandboxed=self.allow_unsandboxed,
        )


class ToolOutput(msgspec.Struct, frozen=True):
    """The result of a call; ``text`` goes back to the model."""

    text: str
    success: bool | None = None
    content: tuple[dict[str, Any], ...] | None = None
    """Model-visible content parts sent instead of ``text`` (``input_text`` / ``input_image``),
    e.g. the image ``view_image`` attaches; ``text`` stays the readable summary."""
    details: Mapping[str, Any] | None = None
    """Structured facts for front ends (never shown to the model): a command's ``exit_code``
    and ``output``, an MCP call's ``result``; see ``runtime/exec_events.py``."""

    @classmethod
    def failure(cls, text: str) -> ToolOutput:
        return cls(text=text, success=False)


@runtime_checkable
class Tool(Protocol):
    """A callable tool. ``payload`` is the function ``arguments`` JSON or the custom ``input``."""

    @property
    def spec(self) -> ToolSpec: ...

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput: ...


def load_tool_prompt(name: str) -> str:
    """A model-visible text shipped in ``tools/prompts/`` (trailing newline removed)."""
    text = resources.files("mini_codex.tools").joinpath("prompts", name).read_text("utf-8")
    return text.rstrip("\n")


def format_validation_error(tool: str, error: ValidationError) -> str:
    """One line per problem: ``field.path: message``, for the model."""
    lines = [f"Invalid arguments for {tool}:"]
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"]) or "(arguments)"
        lines.append(f"- {where}: {problem['msg']}")
    return "\n".join(lines)


def parse_arguments(tool: str, model: type[_M], payload: str) -> _M | ToolOutput:
    """Validate a function-call ``arguments`` JSON string, or explain to the model what is wrong."""
    if not payload.strip():
        payload = "{}"
    try:
        return model.model_validate_json(payload)
    except ValidationError as exc:
        if any(problem["type"] == "json_invalid" for problem in exc.errors()):
            return ToolOutput.failure(
                f"Invalid arguments for {tool}: expected a JSON object, got {payload[:200]!r}"
            )
        return ToolOutput.failure(format_validation_error(tool, exc))
