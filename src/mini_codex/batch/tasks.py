"""Batch task lines: the input format of ``mini-codex batch TASKS.jsonl``, and its loader.

One JSON object per line (blank lines skipped)::

    {"id": "t1", "prompt": "fix the failing test",
     "workspace": {"dir": PATH} | {"git": URL_OR_PATH, "commit"?: SHA} | {"archive": PATH},
     "model"?: "gpt-5.1-codex", "config"?: {...}, "timeout_s"?: 600, "images"?: [PATH, ...]}

``config`` is a table merged over the effective config (like ``-c`` overrides, but nested);
relative workspace, image and ``scripted:PATH`` model paths are resolved against the directory of
the tasks file. Every
problem is a ``ConfigError`` naming the file and the line; ids must be unique.

What does not belong here: preparing workspaces (``workspace.py``), running (``job.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from mini_codex.errors import ConfigError

__all__ = ["STATUSES", "Status", "Task", "TaskLineError", "Workspace", "load_tasks", "parse_task"]

Status = Literal["completed", "failed", "timeout", "error"]
"""How a task ended: ``completed`` (the turn ended with a final message), ``failed`` (the turn
ended with an error, e.g. the model failed), ``timeout`` (``timeout_s`` passed; the turn was
aborted), ``error`` (the task could not run: bad workspace, bad config, a crash)."""

STATUSES: tuple[Status, ...] = ("completed", "failed", "timeout", "error")


@dataclass(frozen=True)
class Workspace:
    """Where a task's fresh workspace copy comes from (exactly one of the three kinds)."""

    kind: Literal["dir", "git", "archive"]
    source: str
    """A directory, a git URL or path, or an archive path."""
    commit: str | None = None
    """For ``git``: the commit to check out (default: the clone's HEAD)."""


@dataclass(frozen=True)
class Task:
    id: str
    prompt: str
    workspace: Workspace
    model: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    timeout_s: float | None = None
    images: tuple[str, ...] = ()


_KEYS = frozenset({"id", "prompt", "workspace", "model", "config", "timeout_s", "images"})


class TaskLineError(Exception):
    """A problem of one task line (the caller adds the file and line)."""


_LineError = TaskLineError


def load_tasks(path: Path) -> list[Task]:
    """Read a tasks file; ``ConfigError("PATH:LINE: ...")`` on any problem."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read tasks file {path}: {exc.strerror or exc}") from None
    base = path.resolve().parent
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            task = parse_task(raw, base=base)
        except _LineError as exc:
            raise ConfigError(f"{path}:{lineno}: {exc}") from None
        if task.id in seen:
            raise ConfigError(
                f"{path}:{lineno}: duplicate task id {task.id!r} (first on line {seen[task.id]})"
            )
        seen[task.id] = lineno
        tasks.append(task)
    if not tasks:
        raise ConfigError(f"{path}: no tasks")
    return tasks


def parse_task(raw: bytes | str, *, base: Path) -> Task:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _LineError(f"invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _LineError("expected a JSON object")
    unknown = sorted(set(value) - _KEYS)
    if unknown:
        raise _LineError(f"unknown key(s) {', '.join(map(repr, unknown))}")
    task_id = value.get("id")
    if not isinstance(task_id, str) or not task_id.strip():
        raise _LineError('"id" must be a non-empty string')
    if "/" in task_id or task_id in (".", "..") or "\x00" in task_id:
        raise _LineError(f'"id" {task_id!r} must not contain "/" (it names a rollout folder)')
    prompt = value.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise _LineError(f'task {task_id!r}: "prompt" must be a non-empty string')
    model = value.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise _LineError(f'task {task_id!r}: "model" must be a non-empty string')
    config = value.get("config", {})
    if not isinstance(config, dict):
        raise _LineError(f'task {task_id!r}: "config" must be an object')
    timeout = value.get("timeout_s")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise _LineError(f'task {task_id!r}: "timeout_s" must be a positive number')
    images = value.get("images", [])
    if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
        raise _LineError(f'task {task_id!r}: "images" must be a list of paths')
    if model is not None and model.startswith("scripted:"):
        model = f"scripted:{_resolve(base, model.removeprefix('scripted:'))}"
    return Task(
        id=task_id,
        prompt=prompt,
        workspace=_workspace(task_id, value.get("workspace"), base),
        model=model,
        config=config,
        timeout_s=None if timeout is None else float(timeout),
        images=tuple(str(_resolve(base, image)) for image in images),
    )


def _workspace(task_id: str, value: Any, base: Path) -> Workspace:
    kinds: tuple[Literal["dir", "git", "archive"], ...] = ("dir", "git", "archive")
    if not isinstance(value, dict) or sum(kind in value for kind in kinds) != 1:
        raise _LineError(
            f'task {task_id!r}: "workspace" must be {{"dir": PATH}}, '
            '{"git": URL_OR_PATH, "commit"?: SHA} or {"archive": PATH}'
        )
    kind: Literal["dir", "git", "archive"] = next(k for k in kinds if k in value)
    allowed = {"git", "commit"} if kind == "git" else {kind}
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise _LineError(f"task {task_id!r}: unknown workspace key(s) {', '.join(unknown)}")
    source = value[kind]
    if not isinstance(source, str) or not source:
        raise _LineError(f'task {task_id!r}: workspace "{kind}" must be a non-empty string')
    commit = value.get("commit")
    if commit is not None and (not isinstance(commit, str) or not commit):
        raise _LineError(f'task {task_id!r}: workspace "commit" must be a non-empty string')
    if kind == "git" and "://" not in source and not source.startswith("git@"):
        source = str(_resolve(base, source))
    elif kind != "git":
        source = str(_resolve(base, source))
    return Workspace(kind=kind, source=source, commit=commit)


def _resolve(base: Path, path: str) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else base / candidate
