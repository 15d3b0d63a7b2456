"""Batch runs: many agent tasks, one command, on this machine or a Ray cluster.

``tasks`` (input lines) → ``job`` (one task through the runtime's ``Session``) → an executor
(``LocalExecutor`` here, ``RayExecutor`` in ``ray_executor``) → ``runner`` (resume, the only
writer of results) → ``store`` (a directory or fsspec URL). ``swebench`` maps SWE-bench instances
to tasks. A front end beside ``cli``: ``cli/batch_cmd.py`` resolves config, keys and environment
into plain ``JobSpec`` data and calls :func:`run_batch`.
"""

from mini_codex.batch.executor import Control, Executor, LocalExecutor
from mini_codex.batch.job import JobSpec, ModelChoice, TaskResult, run_job
from mini_codex.batch.runner import BatchReport, run_batch
from mini_codex.batch.store import ResultStore
from mini_codex.batch.tasks import Task, Workspace, load_tasks

__all__ = [
    "BatchReport",
    "Control",
    "Executor",
    "JobSpec",
    "LocalExecutor",
    "ModelChoice",
    "ResultStore",
    "Task",
    "TaskResult",
    "Workspace",
    "load_tasks",
    "run_batch",
    "run_job",
]
