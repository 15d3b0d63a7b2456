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
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

from mini_codex.batch.store import ResultStore
from mini_codex.batch.tasks import Status, Task
from mini_codex.batch.workspace import diff_against_start, prepare_workspace, snapshot_start
from mini_codex.config import Config
from mini_codex.errors import MiniCodexError
from mini_codex.host import HostEnvironment, ModelChoice, ResolvedSession, build_input
from mini_codex.protocol.events import TokenCount
from mini_codex.protocol.policy import ApprovalPolicy, SandboxPolicy
from mini_codex.protocol.session_events import ErrorEvent, SessionConfigured, SessionEvent

__all__ = ["JobSpec", "ModelChoice", "Outcome", "TaskResult", "run_job"]

Outcome = Status | Literal["interrupted"]


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

        def prepare() -> None:
            prepare_workspace(task.workspace, workspace, spec.env)
            snapshot_start(workspace, git_dir, spec.env)

        await anyio.to_thread.run_sync(prepare)
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
    from mini_codex.host import open_session

    task = spec.task
    resolved = ResolvedSession(
        config=spec.config,
        cwd=workspace,
        model=spec.model,
        sandbox=spec.sandbox,
        approval_policy=spec.approval_policy,
        resume_path=None,
        input=build_input(task.prompt, tuple(Path(image) for image in task.images)),
    )
    env = HostEnvironment(
        home=scratch / "home",
        cwd=workspace,
        user_home=Path.home(),
        shell=spec.shell,
        timezone=spec.timezone,
        variables=spec.environ,
        child_env=spec.env,
    )
    why: list[Outcome] = []
    async with (
        open_session(resolved, env, on_event=collector) as session,
        anyio.create_task_group() as tg,
    ):

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
        final = await session.run_turn(resolved.input or "")
        tg.cancel_scope.cancel()
    if why and final is None:  # (a deadline that passed as the turn ended does not count)
        return why[0], final
    return ("failed" if collector.error else "completed"), final
