"""One agent task, start to finish: the unit every executor runs (in-process or on a Ray worker).

``run_job(spec)`` marks the attempt in the store, makes a fresh workspace in a scratch directory,
snapshots its start, runs one non-interactive turn through the runtime's ``Session`` (sandbox and
approval policy from the config; ``never`` unless set), enforces ``timeout_s`` by interrupting the
turn (so the rollout records the abort), diffs the workspace, uploads the rollout to the store and
returns a :class:`TaskResult`. It never raises for a task's own failure: a workspace that cannot be
made, a bad model name or a crash become status ``error``. An abort (the user's second Ctrl-C)
interrupts the turn the same way and yields ``interrupted``, which the runner does not record, so
a resumed batch runs the task again.

``JobSpec`` is plain, picklable data: the driver resolves everything that depends on its own
process (config files, API keys, environment) before a job is shipped to a worker.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

from mini_codex.batch.store import ResultStore
from mini_codex.batch.tasks import Status, Task
from mini_codex.batch.workspace import (
    PreparationInterrupted,
    diff_against_start,
    prepare_workspace,
    snapshot_start,
)
from mini_codex.config import Config, ModelProviderConfig
from mini_codex.errors import MiniCodexError
from mini_codex.models.base import ModelClient
from mini_codex.protocol.events import TokenCount
from mini_codex.protocol.items import InputImage, InputText, Message
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import ErrorEvent, SessionConfigured, SessionEvent
from mini_codex.tools.images import load_image

__all__ = ["JobSpec", "ModelChoice", "Outcome", "TaskResult", "run_job"]

Outcome = Status | Literal["interrupted"]


@dataclass(frozen=True)
class ModelChoice:
    """A model string with the provider settings and key the driver resolved for it."""

    model: str
    default_provider: str = "openai"
    provider_name: str | None = None
    provider: ModelProviderConfig | None = None
    api_key: str | None = None
    organization: str | None = None
    """``OpenAI-Organization`` (the driver read ``OPENAI_ORG_ID``)."""
    project: str | None = None
    """``OpenAI-Project`` (the driver read ``OPENAI_PROJECT_ID``)."""

    @property
    def slug(self) -> str:
        return "scripted" if self.model.startswith("scripted:") else self.model

    def create(self) -> ModelClient:
        from mini_codex.models.registry import resolve_model

        resolved = resolve_model(self.model, default_provider=self.default_provider)
        return resolved.create(
            provider_name=self.provider_name,
            provider=self.provider,
            api_key=self.api_key,
            organization=self.organization,
            project=self.project,
        )


@dataclass(frozen=True)
class JobSpec:
    task: Task
    config: Config
    model: ModelChoice
    dest: str
    storage_options: Mapping[str, Any] = field(default_factory=dict)
    sandbox: SandboxPolicy | None = None
    approval_policy: ApprovalPolicy | None = None
    shell: str = "/bin/bash"
    env: Mapping[str, str] = field(default_factory=dict)
    """The environment of tool commands (and of git)."""
    timezone: str = "Etc/UTC"
    environ: Mapping[str, str] = field(default_factory=dict)
    scratch_root: str | None = None
    """Where per-task scratch directories go (default: the system temp dir)."""
    keep_workspace: bool = False


@dataclass(frozen=True)
class TaskResult:
    """One line of ``results.jsonl`` (``to_json``), or an unrecorded ``interrupted`` outcome."""

    id: str
    status: Outcome
    final_message: str | None = None
    diff: str = ""
    token_usage: dict[str, int] = field(default_factory=dict)
    duration_s: float = 0.0
    attempts: int = 1
    rollout: str | None = None
    model: str = ""
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "final_message": self.final_message,
            "diff": self.diff,
            "token_usage": self.token_usage,
            "duration_s": round(self.duration_s, 3),
            "attempts": self.attempts,
            "rollout": self.rollout,
            "model": self.model,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> TaskResult:
        return cls(**{name: value[name] for name in cls.__dataclass_fields__ if name in value})


class _Collector:
    """Watches the session's events for its rollout, the token totals and the first error."""

    def __init__(self) -> None:
        self.tokens: dict[str, int] = {}
        self.error: str | None = None
        self.rollout: Path | None = None
        """Known from the start, so even a cancelled job uploads what its session recorded."""

    def __call__(self, event: SessionEvent) -> None:
        if isinstance(event, SessionConfigured) and event.rollout_path:
            self.rollout = Path(event.rollout_path)
        elif isinstance(event, TokenCount) and event.info is not None:
            total = event.info.get("total_token_usage")
            if isinstance(total, dict):
                self.tokens = {k: v for k, v in total.items() if isinstance(v, int)}
        elif isinstance(event, ErrorEvent) and self.error is None:
            self.error = event.message


def _user_input(task: Task) -> list[Message] | str:
    """The task's prompt, with its images checked as ``exec -i`` checks them (format, size)."""
    if not task.images:
        return task.prompt
    content: list[InputText | InputImage] = [InputText(text=task.prompt)]
    for image in task.images:
        content.append(InputImage(image_url=load_image(Path(image)).data_url))
    return [Message(role="user", content=content)]


async def run_job(spec: JobSpec, abort: anyio.Event | None = None) -> TaskResult:
    """Run one task (see module docs); never raises for the task's own failures."""
    task = spec.task
    started = time.monotonic()
    store = ResultStore(spec.dest, spec.storage_options)
    attempts = 1
    scratch = Path(
        tempfile.mkdtemp(prefix=f"mini-codex-batch-{task.id[:40]}-", dir=spec.scratch_root)
    )
    collector = _Collector()
    result: dict[str, Any] = {}
    try:
        attempts = await anyio.to_thread.run_sync(store.mark_attempt, task.id)
        workspace = scratch / "workspace"
        git_dir = scratch / "start.git"

        cancelled = threading.Event()

        def prepare() -> None:
            prepare_workspace(task.workspace, workspace, spec.env, cancelled)
            snapshot_start(workspace, git_dir, spec.env)

        await _abortable(prepare, cancelled, abort)
        outcome, final = await _run_session(spec, workspace, scratch, abort, collector)
        diff = await anyio.to_thread.run_sync(diff_against_start, workspace, git_dir, spec.env)
        result = {
            "status": outcome,
            "final_message": final,
            "diff": diff,
            "token_usage": collector.tokens,
            "error": collector.error
            if outcome == "failed"
            else (f"timed out after {task.timeout_s:g} s" if outcome == "timeout" else None),
        }
    except PreparationInterrupted:
        result = {"status": "interrupted"}
    except MiniCodexError as exc:
        result = {"status": "error", "error": str(exc)}
    except Exception as exc:  # a crash of one task must not stop the batch
        result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
    finally:
        with anyio.CancelScope(shield=True):
            url = await _upload(store, task.id, collector.rollout, result)
            if not spec.keep_workspace:
                await anyio.to_thread.run_sync(shutil.rmtree, scratch, True)
    return TaskResult(
        id=task.id,
        duration_s=time.monotonic() - started,
        attempts=attempts,
        rollout=url,
        model=spec.model.slug,
        **result,
    )


async def _abortable(
    work: Callable[[], None], cancelled: threading.Event, abort: anyio.Event | None
) -> None:
    """Run ``work`` in a worker thread; ``abort`` (a second Ctrl-C) sets ``cancelled``, which
    ``work`` checks between files (a task still being prepared stops too)."""
    if abort is None:
        await anyio.to_thread.run_sync(work)
        return

    async def watch() -> None:
        await abort.wait()
        cancelled.set()

    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            await anyio.to_thread.run_sync(work)
        except Exception as exc:  # raised as itself, not in an exception group
            failure = exc
        finally:
            group.cancel_scope.cancel()
    if failure is not None:
        raise failure


async def _upload(
    store: ResultStore, task_id: str, rollout: Path | None, result: dict[str, Any]
) -> str | None:
    if rollout is None:
        return None
    try:
        return await anyio.to_thread.run_sync(store.put_rollout, task_id, rollout)
    except MiniCodexError as exc:
        result.update(status="error", error=f"rollout upload failed: {exc}")
        return None


async def _run_session(
    spec: JobSpec,
    workspace: Path,
    scratch: Path,
    abort: anyio.Event | None,
    collector: _Collector,
) -> tuple[Outcome, str | None]:
    from mini_codex.runtime.session import Session, SessionOptions

    user_input = _user_input(spec.task)
    client = spec.model.create()
    options = SessionOptions(
        cwd=workspace,
        home=scratch / "home",
        client=client,
        config=spec.config,
        model=spec.model.slug,
        sandbox=spec.sandbox,
        approval_policy=spec.approval_policy,
        shell=spec.shell,
        env=spec.env,
        timezone=spec.timezone,
        on_event=collector,
        environ=spec.environ,
    )
    why: list[Outcome] = []
    try:
        async with Session.open(options) as session, anyio.create_task_group() as tg:

            async def watch() -> None:
                timeout = spec.task.timeout_s
                with anyio.move_on_after(timeout if timeout is not None else float("inf")):
                    if abort is not None:
                        await abort.wait()
                        why.append("interrupted")
                    else:
                        await anyio.sleep_forever()
                if not why:
                    why.append("timeout")
                session.interrupt()

            tg.start_soon(watch)
            final = await session.run_turn(user_input)
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await client.aclose()
    if why and final is None:  # (a deadline that passed as the turn ended does not count)
        return why[0], final
    return ("failed" if collector.error else "completed"), final
