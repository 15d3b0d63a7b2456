"""Headless UI tests: the real app, a real Session (real tools, real rollout), a scripted model."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from mini_codex.config import Config, FeaturesConfig, McpServerConfig, ToolsConfig
from mini_codex.host import Session, SessionOptions, open_options
from mini_codex.mcp.elicitation import ElicitationHandler
from mini_codex.protocol.session_events import SessionEvent
from mini_codex.runtime.approvals import ApprovalCallback
from mini_codex.testing import ScriptedModel, ScriptedResponse
from mini_codex.tools.images import ImageFile
from mini_codex.tui.app import MiniCodexApp
from mini_codex.tui.host import Target
from mini_codex.tui.run import build_app

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}
FIXED_NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Harness:
    work: Path
    home: Path
    model: ScriptedModel
    policy: str = "never"
    sessions: list[Session] = field(default_factory=list)
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    unified_exec: bool = False
    """``exec_command`` + ``write_stdin`` instead of ``shell``."""
    open_delay_s: float = 0.0
    """A slow start (the runtime's imports): the session opens after this long."""
    multi_agent: bool = False
    """``features.multi_agent``: the sub-agent tools."""

    def opener(
        self,
    ) -> Callable[
        [Path | None, ApprovalCallback, Callable[[SessionEvent], None]],
        AsyncIterator[Session],
    ]:
        @asynccontextmanager
        async def open_session(
            resume: Path | None,
            callback: ApprovalCallback,
            on_event: Callable[[SessionEvent], None],
            *,
            elicitation_callback: ElicitationHandler | None = None,
        ) -> AsyncIterator[Session]:
            await anyio.sleep(self.open_delay_s)
            options = SessionOptions(
                cwd=self.work,
                home=self.home,
                client=self.model,
                config=Config(
                    approval_policy=self.policy,  # type: ignore[arg-type]
                    mcp_servers=self.mcp_servers,
                    tools=ToolsConfig(unified_exec=self.unified_exec),
                    features=FeaturesConfig(multi_agent=self.multi_agent),
                ),
                env=ENV,
                clock=lambda: FIXED_NOW,
                resume_path=resume,
                on_event=on_event,
                approval_callback=callback,
                elicitation_callback=elicitation_callback,
            )
            async with open_options(options) as session:
                self.sessions.append(session)
                yield session

        return open_session  # type: ignore[return-value]

    def app(
        self,
        *,
        target: Target = None,
        prompt: str | None = None,
        files: tuple[str, ...] | None = None,
        images: tuple[ImageFile, ...] = (),
    ) -> MiniCodexApp:
        return build_app(
            self.opener(),  # type: ignore[arg-type]
            target=target,
            home=self.home,
            initial_prompt=prompt,
            files=files,
            images=images,
        )


@pytest.fixture
def make_harness(tmp_path: Path) -> Callable[..., Harness]:
    def make(script: list[ScriptedResponse], policy: str = "never") -> Harness:
        work = tmp_path / "work"
        home = tmp_path / "home"
        work.mkdir(exist_ok=True)
        home.mkdir(exist_ok=True)
        return Harness(work, home, ScriptedModel(script), policy)

    return make
