"""``mini-codex batch TASKS.jsonl --out DEST``: many tasks, one command, locally or on Ray.

This module turns argv, the environment and config files into plain ``JobSpec`` data (config per
task, model provider and API key, sandbox, tool environment, storage credentials) and calls the
``batch`` package; it also owns the Ctrl-C handling: the first signal stops scheduling (running
tasks finish), the second aborts the running tasks (their rollouts record the abort); either way
it prints how to resume.

Exit codes: 0 every task completed; 1 some task did not complete; 2 bad input; 130 interrupted.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console

from mini_codex.batch.executor import Control, Executor, LocalExecutor
from mini_codex.batch.job import JobSpec
from mini_codex.batch.lazy import LazySpecs, TaskFile
from mini_codex.batch.progress import BarReporter, JsonReporter, Reporter
from mini_codex.batch.runner import BatchReport, run_batch
from mini_codex.batch.store import RESULTS, ResultStore
from mini_codex.batch.tasks import Task
from mini_codex.cli.boundary import exit_with
from mini_codex.cli.env import host_environment
from mini_codex.cli.remote import storage_options_for
from mini_codex.cli.run import ConfigOpt, ModelOpt, SandboxOpt
from mini_codex.config import Config
from mini_codex.errors import ConfigError, MiniCodexError
from mini_codex.host import choose_model, load_host_config, sandbox_policy
from mini_codex.host.open import tool_environment

__all__ = ["batch_command", "build_specs"]


def _named_variables(config: Config, environ: dict[str, str]) -> dict[str, str]:
    """Only the variables the config names for MCP servers travel with a job (not every secret
    of this process to every Ray worker)."""
    names: set[str] = set()
    for server in config.mcp_servers.values():
        names.update(server.env_vars)
        if server.bearer_token_env_var:
            names.add(server.bearer_token_env_var)
    return {name: environ[name] for name in names if name in environ}


def _warn(line: str) -> None:
    typer.echo(line, err=True)


def build_specs(
    tasks: Sequence[Task],
    *,
    dest: str,
    storage_options: dict[str, Any],
    model: str | None,
    sandbox: str | None,
    overrides: list[str],
    keep_workspaces: bool = False,
) -> LazySpecs:
    """Everything each job needs, resolved in this process when the job is taken (a bad task
    config fails then: ``batch.lazy``); the tasks of a ``TaskFile`` are read lazily too."""
    make = spec_maker(
        dest=dest,
        storage_options=storage_options,
        model=model,
        sandbox=sandbox,
        overrides=overrides,
        keep_workspaces=keep_workspaces,
    )
    if isinstance(tasks, TaskFile):
        file = tasks
        return LazySpecs(tasks, make, lambda: file.ids)
    ids = [task.id for task in tasks]
    return LazySpecs(tasks, make, lambda: ids)


def spec_maker(
    *,
    dest: str,
    storage_options: dict[str, Any],
    model: str | None,
    sandbox: str | None,
    overrides: list[str],
    keep_workspaces: bool = False,
) -> Callable[[Task], JobSpec]:
    """The function that resolves one task's job spec (the config and environment read once)."""
    env = host_environment()
    load_host_config(env.home, overrides, warn=_warn)  # the file's own problems, once

    def make(task: Task) -> JobSpec:
        try:
            config = load_host_config(env.home, overrides, extra=task.config)
        except ConfigError as exc:
            first = " ".join(str(exc).split())[:300]
            raise ConfigError(f"task {task.id!r}: bad config: {first}") from None
        chosen = task.model or model or config.model
        if chosen.startswith("scripted:"):  # workers run elsewhere: make the script path absolute
            chosen = f"scripted:{Path(chosen.removeprefix('scripted:')).expanduser().resolve()}"
        return JobSpec(
            task=task,
            config=config,
            model=choose_model(chosen, config, env),
            dest=dest,
            storage_options=storage_options,
            sandbox=sandbox_policy(sandbox, config),
            shell=env.shell,
            env=tool_environment(env, config),  # the task's shell_environment_policy
            timezone=env.timezone,
            environ=_named_variables(config, dict(env.variables)),
            keep_workspace=keep_workspaces,
        )

    return make


def _executor(
    kind: str,
    workers: int,
    ray_address: str | None,
    ray_num_cpus: float,
    ray_memory: int | None,
    ray_max_retries: int,
) -> Executor:
    match kind:
        case "local":
            return LocalExecutor(workers)
        case "ray":
            # Ray's `uv run` hook would ship the current directory to the workers and re-run
            # `uv run` there; the cluster's nodes already have mini-codex installed.
            os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
            from mini_codex.batch.ray_executor import RayExecutor

            return RayExecutor(
                workers,
                address=ray_address,
                num_cpus=ray_num_cpus,
                memory=ray_memory,
                max_retries=ray_max_retries,
            )
        case _:
            raise ConfigError(f"unknown --executor {kind!r} (local, ray)")


async def _stop_on_signals(control: Control, console: Console) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            if not control.stopping.is_set():
                control.stopping.set()
                console.print(
                    "stopping: no new tasks start; running tasks finish "
                    "(Ctrl-C again to abort them)",
                    markup=False,
                )
            else:
                control.aborting.set()
                console.print("aborting the running tasks", markup=False)
                return


def _run(
    specs: Sequence[JobSpec],
    store: ResultStore,
    executor: Executor,
    reporter: Reporter,
    *,
    retry_failed: bool,
    swebench: bool,
    console: Console,
) -> BatchReport:
    control = Control(on_start=reporter.started)

    async def main() -> BatchReport:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_stop_on_signals, control, console)
            reporter.begin(len(specs))
            try:
                report = await run_batch(
                    specs,
                    store,
                    executor,
                    retry_failed=retry_failed,
                    control=control,
                    on_finished=reporter.finished,
                    swebench=swebench,
                )
            finally:
                reporter.end()
            tg.cancel_scope.cancel()
        return report

    # Stdout carries only --json result lines: what libraries print there (Ray's driver prints
    # its workers' error messages to sys.stdout) goes to stderr instead.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            return anyio.run(main)
        except BaseExceptionGroup as group:
            # One library error (an unwritable destination) is reported as itself.
            if len(group.exceptions) == 1 and isinstance(group.exceptions[0], MiniCodexError):
                raise group.exceptions[0] from None
            raise


def batch_command(
    tasks_file: Annotated[
        Path | None, typer.Argument(help="Tasks, one JSON object per line.", show_default=False)
    ] = None,
    out: Annotated[
        str, typer.Option("--out", "-o", help="Results: a directory or URL (s3://bucket/prefix).")
    ] = "",
    workers: Annotated[int, typer.Option("--workers", "-w", min=1, help="Tasks at a time.")] = 1,
    executor: Annotated[str, typer.Option("--executor", help="local | ray")] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="Ray cluster HOST:PORT (default: a local instance)."),
    ] = None,
    ray_num_cpus: Annotated[float, typer.Option("--ray-num-cpus", help="CPUs per task.")] = 1.0,
    ray_memory: Annotated[
        int | None, typer.Option("--ray-memory", help="Memory per task, bytes.")
    ] = None,
    ray_max_retries: Annotated[
        int, typer.Option("--ray-max-retries", help="Retries after a worker/node dies.")
    ] = 3,
    model: ModelOpt = None,
    sandbox: SandboxOpt = None,
    config: ConfigOpt = None,
    json_: Annotated[
        bool, typer.Option("--json", help="Print one JSON line per finished task.")
    ] = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Run tasks that did not complete again.")
    ] = False,
    swebench: Annotated[
        Path | None,
        typer.Option("--swebench", help="SWE-bench instances (JSONL) instead of TASKS."),
    ] = None,
    repos: Annotated[
        Path | None,
        typer.Option("--repos", help="With --swebench: local mirrors named OWNER__NAME."),
    ] = None,
    timeout_s: Annotated[
        float | None, typer.Option("--timeout", help="With --swebench: seconds per task.")
    ] = None,
    storage_option: Annotated[
        list[str] | None,
        typer.Option("--storage-option", "-S", help="fsspec option for --out: -S key=value."),
    ] = None,
    keep_workspaces: Annotated[
        bool, typer.Option("--keep-workspaces", help="Keep each task's scratch directory.")
    ] = False,
) -> None:
    """Run many tasks, each in a fresh copy of its workspace; resumable."""

    def run() -> int:
        if not out:
            raise MiniCodexError("--out DEST is required (a directory or s3://bucket/prefix)")
        if (tasks_file is None) == (swebench is None):
            raise MiniCodexError("give a TASKS.jsonl file or --swebench INSTANCES.jsonl (one)")
        tasks: Sequence[Task]
        if swebench is not None:
            from mini_codex.batch.swebench import load_instances

            tasks = load_instances(swebench, repos=repos, timeout_s=timeout_s)
        else:
            assert tasks_file is not None
            tasks = TaskFile(tasks_file)  # ids checked now, each task parsed when it is taken
        # Workers (Ray) run elsewhere: a local destination is named by its absolute path.
        dest = out if "://" in out else str(Path(out).expanduser().resolve())
        options = storage_options_for(dest, storage_option)
        store = ResultStore(dest, options)
        specs = build_specs(
            tasks,
            dest=dest,
            storage_options=options,
            model=model,
            sandbox=sandbox,
            overrides=config or [],
            keep_workspaces=keep_workspaces,
        )
        # The first task is resolved now: a config every task shares (a bad -c) fails at once,
        # before any output; the others are resolved as they start (batch.lazy).
        next(iter(specs))
        chosen = _executor(
            executor, workers, ray_address, ray_num_cpus, ray_memory, ray_max_retries
        )
        store.prepare()  # an unwritable destination fails here, before any output
        err = Console(stderr=True, highlight=False, soft_wrap=True)
        reporter: Reporter = JsonReporter(sys.stdout) if json_ else BarReporter(err)
        report = _run(
            specs,
            store,
            chosen,
            reporter,
            retry_failed=retry_failed,
            swebench=swebench is not None,
            console=err,
        )
        counts = ", ".join(f"{n} {s}" for s, n in report.summary["by_status"].items() if n)
        err.print(
            f"{report.summary['finished']}/{report.total} tasks finished ({counts or 'none'}); "
            f"{report.skipped} skipped as already finished; results: {store.url(RESULTS)}",
            markup=False,
        )
        if report.interrupted:
            again = shlex.join(["mini-codex", *sys.argv[1:]])
            err.print(
                f"interrupted: {len(report.unfinished)} task(s) unfinished; resume with: {again}",
                markup=False,
            )
            return 130
        by_status = report.summary["by_status"]
        return 0 if by_status["completed"] == report.summary["finished"] else 1

    exit_with(run)
