"""SWE-bench input: instances (``instance_id``, ``repo``, ``base_commit``, ``problem_statement``)
become batch tasks; the runner writes ``predictions.jsonl`` (``instance_id``,
``model_name_or_path``, ``model_patch``) from the results, for the official harness to score.

A task's workspace is the instance's repository cloned at ``base_commit``: from
``https://github.com/<repo>.git``, or from ``<repos>/<owner>__<name>`` when a local mirror
directory is given (offline runs, tests). The model patch is the workspace diff of the result.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from mini_codex.batch.tasks import Task, Workspace
from mini_codex.errors import ConfigError

__all__ = ["PROMPT", "load_instances"]

PROMPT = (
    "Resolve the following issue in the repository in your working directory. Change the "
    "source code (not the tests) so that the issue is fixed.\n\n<issue>\n{problem}\n</issue>"
)

_REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement")


def load_instances(
    path: Path, *, repos: Path | None = None, timeout_s: float | None = None
) -> list[Task]:
    """Read SWE-bench instances (JSONL, or one JSON array) into tasks; ``ConfigError`` on bad
    input, naming the line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read instances file {path}: {exc.strerror or exc}") from None
    stripped = data.lstrip()
    if stripped.startswith(b"["):
        try:
            values = list(enumerate(orjson.loads(stripped), start=1))
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"{path}: invalid JSON: {exc}") from None
    else:
        values = []
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            if raw.strip():
                try:
                    values.append((lineno, orjson.loads(raw)))
                except orjson.JSONDecodeError as exc:
                    raise ConfigError(f"{path}:{lineno}: invalid JSON: {exc}") from None
    tasks: list[Task] = []
    seen: set[str] = set()
    for where, value in values:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}:{where}: expected a JSON object")
        missing = [key for key in _REQUIRED if not isinstance(value.get(key), str)]
        if missing:
            raise ConfigError(f"{path}:{where}: missing or non-string {', '.join(missing)}")
        instance_id = value["instance_id"]
        if instance_id in seen or "/" in instance_id:
            raise ConfigError(f"{path}:{where}: duplicate or invalid instance_id {instance_id!r}")
        seen.add(instance_id)
        repo = value["repo"]
        source = f"https://github.com/{repo}.git"
        if repos is not None:
            source = str((repos / repo.replace("/", "__")).resolve())
        tasks.append(
            Task(
                id=instance_id,
                prompt=PROMPT.format(problem=value["problem_statement"]),
                workspace=Workspace(kind="git", source=source, commit=value["base_commit"]),
                timeout_s=timeout_s,
            )
        )
    if not tasks:
        raise ConfigError(f"{path}: no instances")
    return tasks
