"""Every front end opens its sessions through ``mini_codex.host``, so for the same options they
send the same first request and refuse the same bad input with the same error class.

One ``config.toml`` (model, sandbox, approval policy) and one workspace; the model is our local
OpenAI Responses server on 127.0.0.1, which records each request body. New sessions: ``exec``
(the real CLI in a subprocess), the interactive UI's session opener, the SDK and a batch job.
Resumed sessions (each from the same copy of one recorded rollout): ``resume`` (the CLI), the UI's
opener and the SDK's ``resume_thread``. Bodies are compared byte for byte after the thread ids
and the working directory (a batch job runs in a copy of the workspace) are replaced by
placeholders.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mini_codex.errors import ConfigError, InputError, MiniCodexError, ResumeRefusedError
from mini_codex.host import machine_shell
from mini_codex.tools.images import ImageError

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests" / "models")]

import fake_openai_server as fake  # noqa: E402

MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")
CONFIG = 'model = "gpt-test"\nsandbox_mode = "read-only"\napproval_policy = "never"\n'
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def answer(n: int) -> fake.Reply:
    message = {
        "type": "message",
        "id": f"msg_{n}",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "done"}],
    }
    return fake.sse_reply(fake.responses_events([message], response_id=f"resp_{n}"))


class World:
    """The shared options: a home with config.toml, a workspace, the model server."""

    def __init__(self, tmp_path: Path, server: fake.FakeOpenAIServer) -> None:
        self.tmp = tmp_path
        self.server = server
        self.home = tmp_path / "home"
        self.home.mkdir()
        (self.home / "config.toml").write_text(CONFIG)
        self.work = tmp_path / "work"
        self.work.mkdir()
        (self.work / "README.md").write_text("the project\n")
        (self.work / "AGENTS.md").write_text("Be brief.\n")

    @property
    def variables(self) -> dict[str, str]:
        """The process environment of a CLI front end: this machine's shell, no TZ."""
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "MINI_CODEX_", "CODEX_")) and k not in ("TZ", "SHELL")
        }
        return {
            **keep,
            "MINI_CODEX_HOME": str(self.home),
            "OPENAI_API_KEY": "sk-local",
            "OPENAI_BASE_URL": self.server.url,
            "SHELL": machine_shell(),
        }

    def first_request(self, run: Callable[[], object], cwd: Path | None = None) -> bytes:
        """The body of the first request ``run`` sends, normalized."""
        before = len(self.server.requests)
        self.server.add(answer(before + 1))
        run()
        assert len(self.server.requests) == before + 1
        body = self.server.requests[before].raw
        body = body.replace(str(cwd or self.work).encode(), b"<cwd>")
        return UUID.sub(b"<id>", body)

    def cli(self, *args: str) -> None:
        done = subprocess.run(
            [MINI_CODEX, *args],
            cwd=self.work,
            env=self.variables,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr

    def with_variables(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in list(os.environ):
            if name.startswith(("OPENAI_", "MINI_CODEX_", "CODEX_")) or name in ("TZ", "SHELL"):
                monkeypatch.delenv(name)
        for name, value in self.variables.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(self.work)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    with fake.serve() as server:
        made = World(tmp_path, server)
        made.with_variables(monkeypatch)
        yield made


def ui_turn(world: World, prompt: str, resume: Path | None = None) -> None:
    from mini_codex.cli.interactive import UiOptions, make_opener

    opener: Any = make_opener(UiOptions(), world.home)

    async def main() -> None:
        async with opener(resume, None, lambda event: None) as session:
            await session.run_turn(prompt)

    anyio.run(main)


def sdk_codex(world: World) -> Any:
    from mini_codex.sdk import Codex

    return Codex(home=world.home, api_key="sk-local", base_url=world.server.url)


def sdk_turn(world: World, prompt: str) -> None:
    thread = sdk_codex(world).start_thread(working_directory=world.work)
    thread.run_sync(prompt)


def batch_turn(world: World, prompt: str) -> Path:
    """Run one batch job (the workspace is copied); returns the copy's directory."""
    from mini_codex.batch.job import run_job
    from mini_codex.batch.tasks import Task, Workspace
    from mini_codex.cli.batch_cmd import build_specs

    task = Task(id="t", prompt=prompt, workspace=Workspace(kind="dir", source=str(world.work)))
    scratch = world.tmp / "scratch"
    scratch.mkdir(exist_ok=True)
    (spec,) = build_specs(
        [task],
        dest=str(world.tmp / "out"),
        storage_options={},
        model=None,
        sandbox=None,
        overrides=[],
    )
    from dataclasses import replace

    spec = replace(spec, scratch_root=str(scratch), keep_workspace=True)
    result = anyio.run(run_job, spec)
    assert (result.status, result.error) == ("completed", None)
    (workspace,) = scratch.glob("*/workspace")
    return workspace.resolve()


def test_new_sessions_send_byte_identical_first_requests(world: World) -> None:
    exec_body = world.first_request(lambda: world.cli("exec", "hello"))
    ui_body = world.first_request(lambda: ui_turn(world, "hello"))
    sdk_body = world.first_request(lambda: sdk_turn(world, "hello"))
    batch_cwd: list[Path] = []

    def batch() -> None:
        batch_cwd.append(batch_turn(world, "hello"))

    before = len(world.server.requests)
    world.server.add(answer(before + 1))
    batch()
    raw = world.server.requests[before].raw.replace(str(batch_cwd[0]).encode(), b"<cwd>")
    batch_body = UUID.sub(b"<id>", raw)
    assert b"Be brief." in exec_body
    assert b"<cwd>" in exec_body
    assert ui_body == exec_body
    assert sdk_body == exec_body
    assert batch_body == exec_body


def test_resumed_sessions_send_byte_identical_first_requests(world: World) -> None:
    world.first_request(lambda: world.cli("exec", "hello"))
    (rollout,) = (world.home / "sessions").rglob("rollout-*.jsonl")
    recorded = rollout.read_bytes()

    def fresh() -> Path:
        rollout.write_bytes(recorded)
        return rollout

    resume_body = world.first_request(lambda: world.cli("resume", str(fresh()), "again"))
    ui_body = world.first_request(lambda: ui_turn(world, "again", resume=fresh()))

    def sdk() -> None:
        sdk_codex(world).resume_thread(str(fresh())).run_sync("again")

    sdk_body = world.first_request(sdk)
    assert b"hello" in resume_body
    assert b"again" in resume_body
    assert ui_body == resume_body
    assert sdk_body == resume_body


BAD = {
    "unknown sandbox": ({"sandbox": "open"}, InputError),
    "missing cwd": ({"cwd": "nowhere"}, InputError),
    "unreadable image": ({"image": "missing.png"}, ImageError),
    "unconfigured provider": ({"config": 'model_provider = "nope"\n'}, ConfigError),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_refused_with_the_same_class_everywhere(world: World, case: str) -> None:
    from mini_codex.cli.exec_extras import ExecExtras
    from mini_codex.cli.interactive import UiOptions, make_opener
    from mini_codex.cli.run import run_session
    from mini_codex.sdk import CodexError

    bad, expected = BAD[case]
    if "config" in bad:
        (world.home / "config.toml").write_text(CONFIG + bad["config"])
    cwd = world.tmp / bad["cwd"] if "cwd" in bad else world.work
    images = (world.tmp / bad["image"],) if "image" in bad else ()
    sandbox = bad.get("sandbox")
    refused: dict[str, BaseException] = {}

    def catch(name: str, run: Callable[[], object]) -> None:
        with pytest.raises(MiniCodexError) as info:
            run()
        refused[name] = info.value

    extras = ExecExtras(images=images)
    common = {"model": None, "as_json": False, "trace_requests": None, "overrides": []}
    catch("exec", lambda: run_session("x", cd=cwd, sandbox=sandbox, extras=extras, **common))

    async def ui() -> None:
        opener: Any = make_opener(UiOptions(cd=cwd, sandbox=sandbox), world.home)
        from mini_codex.host import build_input

        build_input("x", images)  # the UI attaches images before it opens anything
        async with opener(None, None, lambda event: None):
            raise AssertionError("opened")

    catch("ui", lambda: anyio.run(ui))

    def sdk() -> None:
        parts: list[dict[str, str]] = [{"type": "text", "text": "x"}]
        parts += [{"type": "local_image", "path": str(path)} for path in images]
        thread = sdk_codex(world).start_thread(working_directory=cwd, sandbox_mode=sandbox)
        thread.run_sync(parts)

    catch("sdk", sdk)
    assert isinstance(refused["sdk"], CodexError)
    classes = {name: type(error) for name, error in refused.items()}
    assert all(isinstance(error, expected) for error in refused.values()), classes
    messages = {str(error) for name, error in refused.items() if name != "sdk" or "cwd" not in bad}
    assert len(messages) == 1, messages  # the SDK refuses a missing working_directory= by name
    assert not (world.home / "sessions").exists()  # nothing was recorded
    if "sandbox" in bad or "config" in bad:
        from mini_codex.batch.tasks import Task, Workspace
        from mini_codex.cli.batch_cmd import build_specs

        task = Task(id="t", prompt="x", workspace=Workspace(kind="dir", source=str(world.work)))
        specs = build_specs(
            [task], dest="out", storage_options={}, model=None, sandbox=sandbox, overrides=[]
        )
        with pytest.raises(expected) as batch:  # a task's spec is resolved when it is taken
            list(specs)
        assert str(batch.value) == messages.pop()


def test_resume_refusal_is_the_same_for_the_cli_the_ui_and_the_sdk(world: World) -> None:
    from mini_codex.cli.interactive import UiOptions, make_opener
    from mini_codex.cli.run import run_session

    folder = world.home / "sessions" / "2026" / "01" / "01"
    folder.mkdir(parents=True)
    rollout = folder / "rollout-2026-01-01T00-00-00-019b0000-0000-7000-8000-000000000001.jsonl"
    meta = '{"id": "019b0000-0000-7000-8000-000000000001", "cwd": "/", "timestamp": "2026"}'
    rollout.write_text(
        f'{{"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": {meta}}}\n'
    )
    refused: list[BaseException] = []
    with pytest.raises(ResumeRefusedError) as cli:
        run_session(
            "x",
            model=None,
            cd=None,
            sandbox=None,
            as_json=False,
            trace_requests=None,
            overrides=[],
            resume_path=rollout,
        )
    refused.append(cli.value)

    async def ui() -> None:
        opener: Any = make_opener(UiOptions(), world.home)
        async with opener(rollout, None, lambda event: None):
            raise AssertionError("opened")

    with pytest.raises(ResumeRefusedError) as from_ui:
        anyio.run(ui)
    refused.append(from_ui.value)
    with pytest.raises(ResumeRefusedError) as from_sdk:
        sdk_codex(world).resume_thread(str(rollout))
    # The SDK names its own way to choose a directory (working_directory=, not --cd).
    refused.append(from_sdk.value)
    texts = {str(error).replace("working_directory=", "--cd") for error in refused}
    assert len(texts) == 1
    assert rollout.read_text().count("\n") == 1  # nothing was appended
    shutil.rmtree(world.home / "sessions")
