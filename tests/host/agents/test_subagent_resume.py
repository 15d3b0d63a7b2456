"""Resume after ``kill -9``: the parent and its child are killed while the child runs; every
rollout verifies, the resumed parent reports the child ``interrupted`` and resumes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from subagent_script import RoutedModel, answer, call, outputs
from typer.testing import CliRunner

from mini_codex.cli.main import app as cli
from mini_codex.config import Config
from mini_codex.host import open_options
from mini_codex.host.assemble import SessionOptions
from mini_codex.models.base import Prompt
from mini_codex.protocol import ResponseItem
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.rollout.reader import read_rollout

HERE = Path(__file__).resolve().parent


def killed_run(work: Path, home: Path) -> Path:
    """Run the target until its child's command runs and the parent waits, then SIGKILL it."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "subagent_kill_target.py"), str(work), str(home)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert proc.stdout is not None
    parent = Path(proc.stdout.readline().strip())
    pid_file = work / "child.pid"
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline, "the child's command never started"
        time.sleep(0.05)
    time.sleep(0.5)  # the parent's wait_agent step is recorded
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    try:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)  # the child's orphaned command
    except ProcessLookupError:
        pass
    return parent


@pytest.mark.anyio
async def test_a_child_running_at_kill_9_is_interrupted_and_can_be_resumed(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    parent_path = killed_run(work, home)
    paths = sorted(home.rglob("*.jsonl"))
    assert len(paths) == 2
    (child_path,) = [p for p in paths if p != parent_path]
    child_id = read_rollout(child_path).lines[0].payload.id
    for path in paths:
        verified = CliRunner().invoke(cli, ["rollout", "verify", str(path)])
        assert verified.exit_code == 0, verified.output

    def script(agent: str, step: int, prompt: Prompt) -> list[ResponseItem]:
        if agent == "CHILD":
            return [answer("recovered")]
        if step == 0:
            return [call("r", "resume_agent", {"id": child_id})]
        if step == 1:
            return [call("i", "send_input", {"target": child_id, "message": "CHILD: go on"})]
        if step == 2:
            return [call("w", "wait_agent", {"targets": [child_id]})]
        return [answer(outputs(prompt)["w"])]

    client = RoutedModel(script, ["CHILD", "PARENT"])
    options = SessionOptions(
        cwd=work,
        home=home,
        client=client,
        config=Config.model_validate({"features": {"multi_agent": True}}),
        sandbox=SandboxPolicy.danger_full_access(),
        approval_policy="never",
        admin_skills_root=None,
        resume_path=parent_path,
    )
    with anyio.fail_after(60):
        async with open_options(options) as session:
            restored = session.agents.children[child_id]
            assert (restored.status.kind, restored.open) == ("interrupted", False)
            result = await session.run_turn("PARENT: go on")
    found = outputs(client.requests_of("PARENT")[-1])
    assert json.loads(found["r"]) == {"status": "pending_init"}
    assert json.loads(result or "") == {
        "status": {child_id: {"completed": "recovered"}},
        "timed_out": False,
    }
    # The child went on in its own rollout, with its first turn's history.
    child_prompt = client.requests_of("CHILD")[0]
    assert "CHILD: run forever" in json.dumps([i.model_dump() for i in child_prompt.input])
    assert sorted(home.rglob("*.jsonl")) == paths
    for path in paths:
        verified = CliRunner().invoke(cli, ["rollout", "verify", str(path)])
        assert verified.exit_code == 0, verified.output
