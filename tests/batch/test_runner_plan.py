"""Laws of the resume plan: what runs again and which result lines are kept."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mini_codex.batch import JobSpec, ModelChoice, Task, Workspace
from mini_codex.batch.runner import plan
from mini_codex.batch.tasks import STATUSES
from mini_codex.config import Config

IDS = [f"t{n}" for n in range(8)]


def _spec(task_id: str) -> JobSpec:
    return JobSpec(
        task=Task(id=task_id, prompt="p", workspace=Workspace(kind="dir", source=str(Path("/")))),
        config=Config(),
        model=ModelChoice(model="scripted:/dev/null"),
        dest="/tmp/unused",
    )


SPECS = [_spec(task_id) for task_id in IDS]


@given(
    finished=st.dictionaries(st.sampled_from([*IDS, "other"]), st.sampled_from(STATUSES)),
    retry_failed=st.booleans(),
)
def test_plan_runs_each_unfinished_task_once_and_keeps_the_rest(
    finished: dict[str, str], retry_failed: bool
) -> None:
    records = [{"id": task_id, "status": status} for task_id, status in finished.items()]

    todo, kept = plan(SPECS, records, retry_failed=retry_failed)

    run_ids = [spec.task.id for spec in todo]
    kept_ids = [record["id"] for record in kept]
    again = {
        task_id
        for task_id, status in finished.items()
        if retry_failed and status != "completed" and task_id in IDS
    }
    assert run_ids == [task_id for task_id in IDS if task_id not in finished or task_id in again]
    assert kept == [record for record in records if record["id"] not in again]
    assert not set(run_ids) & set(kept_ids)  # never a second line for an id
    assert set(IDS) <= set(run_ids) | set(kept_ids)  # every task is either done or scheduled
