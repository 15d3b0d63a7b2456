"""Tasks and job specs resolved lazily: a large tasks file starts its first task at once.

``TaskFile`` counts a tasks file's lines at open (one quick pass) and parses each task
(``tasks.parse_task``) when the run reaches it; ids are checked for duplicates as they come.
``LazySpecs`` turns tasks into job specs the same way, one at a time, as an executor takes them
(resolving a spec — its config, model, sandbox — is most of a task's setup cost). Memory grows
with the ids seen (the duplicate check, tens of bytes a task), not with resolved tasks (KBs).

A problem found when a task is reached (bad JSON, a bad prompt or config, a duplicate id) is a
``ConfigError`` naming the file and line; the executors then start no further task, let the
running ones finish, and raise it. The ids of the whole file are read again when the run ends
(the summary, the unfinished ids).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

from mini_codex.batch.job import JobSpec
from mini_codex.batch.tasks import Task, TaskLineError, parse_task
from mini_codex.errors import ConfigError

__all__ = ["LazySpecs", "TaskFile", "task_ids"]


class TaskFile(Sequence[Task]):
    """The tasks of a file (see module docs). Opening it counts the task lines (one quick pass);
    iterating parses each task as it is reached (``ConfigError("PATH:LINE: ...")`` for a bad
    line or a duplicate id then), so the first task starts before the rest is read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = path.resolve().parent
        try:
            with path.open("rb") as handle:
                self._count = sum(1 for raw in handle if raw.strip())
        except OSError as exc:
            raise ConfigError(f"cannot read tasks file {path}: {exc.strerror or exc}") from None
        if not self._count:
            raise ConfigError(f"{path}: no tasks")

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        with self.path.open("rb") as handle:
            for lineno, raw in enumerate(handle, start=1):
                if raw.strip():
                    yield lineno, raw

    @property
    def ids(self) -> list[str]:
        """Every task's id, in file order (one pass; used when the run ends)."""
        return [_line_id(raw, self.path, lineno) for lineno, raw in self._lines()]

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Task: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Task]: ...
    def __getitem__(self, index: int | slice) -> Task | Sequence[Task]:
        if isinstance(index, slice):
            return list(self)[index]
        for position, task in enumerate(self):
            if position == index:
                return task
        raise IndexError(index)

    def __iter__(self) -> Iterator[Task]:
        """The tasks in file order, each parsed when reached; a duplicate id is refused."""
        seen: dict[str, int] = {}
        for lineno, raw in self._lines():
            task_id = _line_id(raw, self.path, lineno)
            if task_id in seen:
                raise ConfigError(
                    f"{self.path}:{lineno}: duplicate task id {task_id!r} "
                    f"(first on line {seen[task_id]})"
                )
            seen[task_id] = lineno
            try:
                yield parse_task(raw, base=self.base)
            except TaskLineError as exc:
                raise ConfigError(f"{self.path}:{lineno}: {exc}") from None


_ID_FIRST = re.compile(rb'\s*\{\s*"id"\s*:\s*"([^"\\]+)"\s*,')
"""A line that starts ``{"id": "PLAIN",`` (how tools write task lines): its id without parsing."""


def _line_id(raw: bytes, path: Path, lineno: int) -> str:
    """The line's id, checked as ``parse_task`` checks it (the rest waits until it is taken:
    a line that starts with a plain id is parsed in full only then)."""
    quick = _ID_FIRST.match(raw)
    if quick is not None:
        try:
            task_id = quick.group(1).decode()
        except UnicodeDecodeError:
            task_id = ""
        if task_id.strip():
            return task_id
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
    """Job specs made from ``tasks`` (tasks, or specs already made) by ``make`` as they are
    taken, those whose id ``keep`` accepts; ``ids`` lists the kept ids without making specs."""

    def __init__(
        self,
        tasks: Sequence[Any],
        make: Callable[[Any], JobSpec],
        ids: Callable[[], list[str]],
        keep: Callable[[str], bool] | None = None,
        id_of: Callable[[Any], str] = lambda task: str(task.id),
    ) -> None:
        self.tasks = tasks
        self.make = make
        self.all_ids = ids
        self.selected = keep is not None
        """Some tasks are left out: the length is the kept ids' (a pass over them)."""
        self.keep: Callable[[str], bool] = keep or (lambda task_id: True)
        self.id_of = id_of

    @property
    def ids(self) -> list[str]:
        if not self.selected:
            return self.all_ids()
        return [task_id for task_id in self.all_ids() if self.keep(task_id)]

    def select(self, keep: Callable[[str], bool]) -> LazySpecs:
        before = self.keep
        both = lambda task_id: before(task_id) and keep(task_id)  # noqa: E731
        return LazySpecs(self.tasks, self.make, self.all_ids, both, self.id_of)

    def __len__(self) -> int:
        return len(self.ids) if self.selected else len(self.tasks)

    @overload
    def __getitem__(self, index: int) -> JobSpec: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[JobSpec]: ...
    def __getitem__(self, index: int | slice) -> JobSpec | Sequence[JobSpec]:
        if isinstance(index, slice):
            return list(self)[index]
        for position, spec in enumerate(self):
            if position == index:
                return spec
        raise IndexError(index)

    def __iter__(self) -> Iterator[JobSpec]:
        for task in self.tasks:
            if self.keep(self.id_of(task)):
                yield self.make(task)


def task_ids(specs: Sequence[JobSpec]) -> list[str]:
    """The task ids of ``specs`` (without making lazy specs)."""
    if isinstance(specs, LazySpecs):
        return specs.ids
    return [spec.task.id for spec in specs]


def as_lazy(specs: Sequence[JobSpec]) -> LazySpecs:
    if isinstance(specs, LazySpecs):
        return specs
    items = list(specs)
    ids = [spec.task.id for spec in items]
    return LazySpecs(items, _same, lambda: ids, id_of=lambda spec: str(spec.task.id))


def _same(spec: JobSpec) -> JobSpec:
    return spec
