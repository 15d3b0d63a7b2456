"""SWE-bench instances in, predictions out; and the clear errors of bad batch input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest
from batch_helpers import answer, results, run_cli, shell, write_script, write_tasks

from mini_codex.batch import load_tasks
from mini_codex.errors import ConfigError


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_swebench_instances_become_tasks_and_predictions(tmp_path: Path) -> None:
    repo = tmp_path / "mirrors" / "octo__calc"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "calc.py").write_text("def add(a, b):\n    return 'later commit'\n")
    _git(repo, "commit", "-qam", "later")
    instances = tmp_path / "instances.jsonl"
    instances.write_bytes(
        orjson.dumps(
            {
                "instance_id": "octo__calc-1",
                "repo": "octo/calc",
                "base_commit": base,
                "problem_statement": "add() subtracts",
                "version": "1.0",
            }
        )
        + b"\n"
    )
    fix = "sed -i 's/a - b/a + b/' calc.py"
    model = write_script(tmp_path / "fix.jsonl", [shell(fix), answer("fixed")])

    done = run_cli(
        ["batch", "--swebench", str(instances), "--repos", str(tmp_path / "mirrors"),
         "--out", str(tmp_path / "out"), "--model", model, "--json"],
        home=tmp_path / "home",
        cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    [record] = results(tmp_path / "out")
    predictions = (tmp_path / "out" / "predictions.jsonl").read_bytes().splitlines()
    assert [orjson.loads(line) for line in predictions] == [
        {
            "instance_id": "octo__calc-1",
            "model_name_or_path": "scripted",
            "model_patch": record["diff"],
        }
    ]
    assert "-    return a - b\n+    return a + b\n" in record["diff"]
    _git(repo, "checkout", "-q", base)
    check = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=repo, input=record["diff"], text=True
    )
    assert check.returncode == 0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "a", "prompt": "x"}', 'task \'a\': "workspace" must be {"dir": PATH}'),
        ('{"id": "a/b", "prompt": "x", "workspace": {"dir": "."}}', "\"id\" 'a/b' must not"),
        ('{"id": "a", "prompt": "", "workspace": {"dir": "."}}', '"prompt" must be a non-empty'),
        ('{"id": "a", "prompt": "x", "workspace": {"dir": "."}, "timeout_s": 0}', '"timeout_s"'),
        ('{"id": "a", "prompt": "x", "workspace": {"dir": "."}, "extra": 1}', "unknown key(s)"),
        ("[1]", "expected a JSON object"),
        ("{", "invalid JSON"),
    ],
)
def test_bad_task_lines_are_one_clear_error_naming_the_line(
    tmp_path: Path, line: str, message: str
) -> None:
    good = '{"id": "ok", "prompt": "x", "workspace": {"dir": "."}}'
    path = tmp_path / "tasks.jsonl"
    path.write_text(f"{good}\n\n{line}\n")
    with pytest.raises(ConfigError) as caught:
        load_tasks(path)
    assert str(caught.value).startswith(f"{path}:3: ")
    assert message in str(caught.value)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    line = {"id": "same", "prompt": "x", "workspace": {"git": "repo", "commit": "abc"}}
    path = write_tasks(tmp_path / "tasks.jsonl", [line, line])
    with pytest.raises(
        ConfigError, match=r"tasks.jsonl:2: duplicate task id 'same' \(first on line 1\)"
    ):
        load_tasks(path)
    assert load_tasks(write_tasks(tmp_path / "one.jsonl", [line]))[0].workspace.source == str(
        tmp_path / "repo"
    )


def test_the_cli_refuses_bad_input_before_running_anything(tmp_path: Path) -> None:
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {
                "id": "a",
                "prompt": "x",
                "workspace": {"dir": "."},
                "config": {"sandbox_mode": "bogus"},
            }
        ],
    )
    done = run_cli(
        ["batch", str(tasks), "--out", str(tmp_path / "out")], home=tmp_path / "h", cwd=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: task 'a': bad config: ")
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()
    missing = run_cli(["batch", str(tasks)], home=tmp_path / "h", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        2,
        "error: --out DEST is required (a directory or s3://bucket/prefix)\n",
    )
