"""What a batch shows while it runs: a rich progress bar, or one JSON line per finished task.

The bar shows done/total, running, failed (any status but ``completed``), the ETA and the tokens
used so far (the providers we support report no cost, so none is shown).
"""

from __future__ import annotations

from typing import TextIO

import orjson
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from mini_codex.batch.job import TaskResult

__all__ = ["BarReporter", "JsonReporter", "Reporter"]


class Reporter:
    """Base reporter: ignores everything."""

    def begin(self, total: int) -> None:
        pass

    def started(self, task_id: str) -> None:
        pass

    def finished(self, result: TaskResult) -> None:
        pass

    def end(self) -> None:
        pass


class JsonReporter(Reporter):
    """``--json``: each finished task's result line, as written to ``results.jsonl``."""

    def __init__(self, stdout: TextIO) -> None:
        self.stdout = stdout

    def finished(self, result: TaskResult) -> None:
        self.stdout.write(orjson.dumps(result.to_json()).decode() + "\n")
        self.stdout.flush()


class BarReporter(Reporter):
    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("running {task.fields[running]}"),
            TextColumn("[red]failed {task.fields[failed]}"),
            TextColumn("tokens {task.fields[tokens]:,}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.running = 0
        self.failed = 0
        self.tokens = 0
        self.task = self.progress.add_task("batch", total=0, running=0, failed=0, tokens=0)

    def begin(self, total: int) -> None:
        self.progress.update(self.task, total=total)
        self.progress.start()

    def started(self, task_id: str) -> None:
        self.running += 1
        self.progress.update(self.task, running=self.running)

    def finished(self, result: TaskResult) -> None:
        self.running = max(0, self.running - 1)
        if result.status != "completed":
            self.failed += 1
            line = Text.assemble((result.status, "red"), f" {result.id}: {result.error or ''}")
            self.console.print(line)
        self.tokens += result.token_usage.get("total_tokens", 0)
        self.progress.update(
            self.task, advance=1, running=self.running, failed=self.failed, tokens=self.tokens
        )

    def end(self) -> None:
        self.progress.stop()
