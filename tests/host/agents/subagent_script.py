"""A model for sub-agent tests: each request is answered by a function of the agent and its step.

Parent and children share one model client (as they share the provider in production); the
client tells them apart by their first user message (``PARENT``/``CHILD-A``/...) and asks the
test's ``script(agent, step, prompt)`` for the output items, which a one-shot ``ScriptedModel``
streams. The Codex recording (``tests/fixtures/codex_subagents/record.py``) uses the same routing.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from mini_codex.config import Config
from mini_codex.host import open_options
from mini_codex.host.assemble import SessionOptions
from mini_codex.models.base import ModelEvent, Prompt
from mini_codex.protocol import FunctionCall, FunctionCallOutput, Message, ResponseItem
from mini_codex.protocol.items import message_text
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.testing import ScriptedFailure, ScriptedModel, ScriptedResponse, assistant

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "codex_subagents"
NS = "multi_agent_v1"

Script = Callable[[str, int, Prompt], Sequence[ResponseItem] | ScriptedFailure]


def call(
    call_id: str, name: str, arguments: dict[str, Any], namespace: str | None = NS
) -> FunctionCall:
    return FunctionCall(
        name=name, arguments=json.dumps(arguments), call_id=call_id, namespace=namespace
    )


def answer(text: str) -> Message:
    return assistant(text)


def user_texts(prompt: Prompt) -> list[str]:
    return [
        message_text(item)
        for item in prompt.input
        if isinstance(item, Message) and item.role == "user"
    ]


def outputs(prompt: Prompt) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in prompt.input:
        if isinstance(item, FunctionCallOutput):
            found[item.call_id] = item.output if isinstance(item.output, str) else str(item.output)
    return found


def agent_of(prompt: Prompt, names: Sequence[str]) -> str:
    texts = "\n".join(user_texts(prompt))
    for name in names:
        if name in texts:
            return name
    return "?"


class RoutedModel:
    """A ``ModelClient`` routing each request to ``script`` (see the module docstring)."""

    def __init__(
        self,
        script: Script,
        names: Sequence[str],
        gate: Callable[[str, int], Awaitable[None]] | None = None,
    ) -> None:
        self.script = script
        self.gate = gate
        """Awaited before a request is answered (a test holds one agent back for another)."""
        self.names = tuple(names)
        self.steps: dict[str, int] = {}
        self.prompts: list[tuple[str, Prompt]] = []

    async def aclose(self) -> None:
        pass

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        agent = agent_of(prompt, self.names)
        step = self.steps.get(agent, 0)
        self.steps[agent] = step + 1
        self.prompts.append((agent, prompt))
        if self.gate is not None:
            await self.gate(agent, step)
        output = self.script(agent, step, prompt)
        reply = output if isinstance(output, ScriptedFailure) else ScriptedResponse(output)
        async for event in ScriptedModel([reply]).stream(prompt):
            yield event

    def requests_of(self, agent: str) -> list[Prompt]:
        return [prompt for who, prompt in self.prompts if who == agent]


def spawn_two(home: Path, work: Path) -> tuple[str, dict[str, str]]:
    """A parent that spawns two children and waits for each before it answers: every child has
    finished its one step when the session closes (a parent that answered at once closed its
    children at whatever point they had reached: zero, one or two recorded steps)."""
    ids: list[str] = []

    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent != "PARENT":
            return [answer(f"{agent} done")]
        if step == 0:
            return [call(f"s{n}", "spawn_agent", {"message": f"CHILD-{n}"}) for n in (1, 2)]
        if not ids:
            found = outputs(prompt)
            ids.extend(json.loads(found[f"s{n}"])["agent_id"] for n in (1, 2))
        if step <= len(ids):
            target = ids[step - 1]
            return [call(f"w{step}", "wait_agent", {"targets": [target], "timeout_ms": 30000})]
        return [answer(f"{agent} done")]

    async def run() -> tuple[str, dict[str, str]]:
        options = SessionOptions(
            cwd=work,
            home=home,
            client=RoutedModel(script, ["CHILD-1", "CHILD-2", "PARENT"]),
            config=Config.model_validate({"features": {"multi_agent": True}}),
            sandbox=SandboxPolicy.danger_full_access(),
            approval_policy="never",
            admin_skills_root=None,
        )
        async with open_options(options) as session:
            await session.run_turn("PARENT: spawn two")
            children = {c.id: c.nickname or "" for c in session.agents.children.values()}
            return session.session_id, children

    return anyio.run(run)
