"""Tasks and job specs resolved lazily: a large tasks file starts its first task at once.

``TaskFile`` reads a tasks file in one pass at open (JSON, ids, duplicates: the problems that
must stop a batch before anything runs) and keeps, per task, only its id and the byte offset
of its line; a task is parsed in full (``tasks.parse_task``) when it is taken. ``LazySpecs``
turns tasks into job specs the same way, one at a time, as an executor takes them (resolving a
spec — its config, model, sandbox — is most of a task's setup cost). Memory grows with the
ids and offsets (tens of bytes a task), not with resolved tasks (kilobytes each).

A problem found only when a task is taken (a bad prompt, a bad config) is a ``ConfigError``
naming the file and line; the executors then start no further task, let the running ones finish,
and raise it.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

from mini_codex.batch.job import JobSpec
from mini_codex.batch.tasks import Task, TaskLineError, parse_task
from mini_codex.errors import ConfigError

__all__ = ["LazySpecs", "TaskFile", "task_ids"]


class TaskFile(Sequence[Task]):
    """The tasks of a file (see module docs); ``ConfigError("PATH:LINE: ...")`` on open for bad
    JSON, a bad or duplicate id, or no tasks."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = path.resolve().parent
        self.offsets = array("q")
        self.lines = array("q")
        self.ids: list[str] = []
        seen: dict[str, int] = {}
        try:
            handle = path.open("rb")
        except OSError as exc:
            raise ConfigError(f"cannot read tasks file {path}: {exc.strerror or exc}") from None
        with handle:
            offset = 0
            for lineno, raw in enumerate(handle, start=1):
                here = offset
                offset += len(raw)
                if not raw.strip():
                    continue
                task_id = _line_id(raw, path, lineno)
                if task_id in seen:
                    raise ConfigError(
                        f"{path}:{lineno}: duplicate task id {task_id!r} "
                        f"(first on line {seen[task_id]})"
                    )
                seen[task_id] = lineno
                self.ids.append(task_id)
                self.offsets.append(here)
                self.lines.append(lineno)
        if not self.ids:
            raise ConfigError(f"{path}: no tasks")

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Task: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Task]: ...
    def __getitem__(self, index: int | slice) -> Task | Sequence[Task]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        with self.path.open("rb") as handle:
            handle.seek(self.offsets[index])
            raw = handle.readline()
        try:
            return parse_task(raw, base=self.base)
        except TaskLineError as exc:
            raise ConfigError(f"{self.path}:{self.lines[index]}: {exc}") from None

    def __iter__(self) -> Iterator[Task]:
        """The tasks in file order, parsed one at a time from one open file."""
        with self.path.open("rb") as handle:
            for index, offset in enumerate(self.offsets):
                handle.seek(offset)
                raw = handle.readline()
                try:
                    yield parse_task(raw, base=self.base)
                except TaskLineError as exc:
                    raise ConfigError(f"{self.path}:{self.lines[index]}: {exc}") from None


def _line_id(raw: bytes, path: Path, lineno: int) -> str:
    """The line's id, checked as ``parse_task`` checks it (the rest waits until it is taken)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{lineno}: invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}:{lineno}: expected a JSON object")
    task_id = value.get("id")
    if not isinstance(task_id, str) or not task_id.strip():
        raise ConfigError(f'{path}:{lineno}: "id" must be a non-empty string')
    return task_id


class LazySpecs(Sequence[JobSpec]):
    """Job specs made from ``tasks`` (tasks, or specs already made) by ``make`` when taken; their
    ``ids`` are known without making any.

    ``indices`` selects some of the tasks (what is left to run)."""

    def __init__(
        self,
        tasks: Sequence[Any],
        make: Callable[[Any], JobSpec],
        ids: Sequence[str],
        indices: Sequence[int] | None = None,
    ) -> None:
        self.tasks = tasks
        self.make = make
        self.all_ids = ids
        self.indices: Sequence[int] = range(len(ids)) if indices is None else indices

    @property
    def ids(self) -> list[str]:
        return [self.all_ids[i] for i in self.indices]

    def select(self, keep: Callable[[str], bool]) -> LazySpecs:
        chosen = array("q", (i for i in self.indices if keep(self.all_ids[i])))
        return LazySpecs(self.tasks, self.make, self.all_ids, chosen)

    def __len__(self) -> int:
        return len(self.indices)

    @overload
    def __getitem__(self, index: int) -> JobSpec: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[JobSpec]: ...
    def __getitem__(self, index: int | slice) -> JobSpec | Sequence[JobSpec]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self.make(self.tasks[self.indices[index]])

    def __iter__(self) -> Iterator[JobSpec]:
        for index in self.indices:
            yield self.make(self.tasks[index])


def task_ids(specs: Sequence[JobSpec]) -> list[str]:
    """The task ids of ``specs`` (without making lazy specs)."""
    if isinstance(specs, LazySpecs):
        return specs.ids
    return [spec.task.id for spec in specs]


def as_lazy(specs: Sequence[JobSpec]) -> LazySpecs:
    if isinstance(specs, LazySpecs):
        return specs
    items = list(specs)
    return LazySpecs(items, _same, [spec.task.id for spec in items])


def _same(spec: JobSpec) -> JobSpec:
    return spec
