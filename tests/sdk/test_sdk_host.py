"""The SDK opens its threads through ``mini_codex.host``: the CLI's refusals (with the same error
classes, as typed ``CodexError`` subclasses), the machine's shell and timezone."""

from __future__ import annotations

import json
import pwd
from pathlib import Path
from typing import Any

import pytest

from mini_codex.errors import ConfigError, InputError, MiniCodexError, RolloutError
from mini_codex.host import ResumeRefusedError, machine_shell, machine_timezone
from mini_codex.runtime.output_schema import OutputSchemaError
from mini_codex.sdk import (
    Codex,
    CodexConfigError,
    CodexError,
    CodexImageError,
    CodexInputError,
    CodexOutputSchemaError,
    CodexResumeRefusedError,
    CodexRolloutError,
    TurnFailedError,
)
from mini_codex.tools.images import ImageError

pytestmark = pytest.mark.anyio

ANSWER = [{"output": [{"type": "message", "content": "done"}]}]


def script(tmp_path: Path, lines: list[dict[str, Any]] = ANSWER) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return f"scripted:{path}"


def recorded_in(tmp_path: Path, cwd: Path) -> Path:
    """A rollout of ours whose session was recorded in ``cwd``."""
    folder = tmp_path / "home" / "sessions" / "2026" / "01" / "01"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rollout-2026-01-01T00-00-00-019b0000-0000-7000-8000-000000000001.jsonl"
    meta = {"id": "019b0000-0000-7000-8000-000000000001", "cwd": str(cwd), "timestamp": "2026"}
    line = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": meta}
    path.write_text(json.dumps(line) + "\n")
    return path


@pytest.mark.parametrize("where", ["home", "root"])
def test_resuming_a_thread_recorded_in_home_or_root_is_refused(tmp_path: Path, where: str) -> None:
    cwd = Path.home() if where == "home" else Path("/")
    path = recorded_in(tmp_path, cwd)
    codex = Codex(home=tmp_path / "home")
    with pytest.raises(CodexResumeRefusedError) as refused:
        codex.resume_thread(str(path))
    assert isinstance(refused.value, ResumeRefusedError)
    assert isinstance(refused.value.__cause__, ResumeRefusedError)
    assert str(refused.value) == (
        f"the session was recorded in {cwd}; resuming there would make it the sandbox's "
        f"writable root. Pass --cd DIR (--cd {cwd} to confirm)."
    )
    # Naming the directory confirms it, as --cd does.
    confirmed = codex.resume_thread(str(path), working_directory=tmp_path)
    assert confirmed.id == "019b0000-0000-7000-8000-000000000001"


async def test_runs_tell_the_model_the_machines_shell_and_timezone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pwd.getpwuid

    def login(uid: int) -> pwd.struct_passwd:
        entry = real(uid)
        return pwd.struct_passwd((*entry[:6], "/bin/sh"))

    monkeypatch.setattr(pwd, "getpwuid", login)
    monkeypatch.setattr("mini_codex.host.environment.machine_timezone", lambda: "Asia/Tokyo")
    work = tmp_path / "work"
    work.mkdir()
    codex = Codex(home=tmp_path / "home", model=script(tmp_path))
    assert (codex.host.shell, codex.host.timezone) == ("/bin/sh", "Asia/Tokyo")
    thread = codex.start_thread(working_directory=work)
    await thread.run("hi")
    assert thread.rollout_path is not None
    text = thread.rollout_path.read_text()
    assert "<shell>sh</shell>" in text
    assert "<timezone>Asia/Tokyo</timezone>" in text
    assert "Etc/UTC" not in text


def test_without_patches_the_host_is_the_machine(tmp_path: Path) -> None:
    codex = Codex(home=tmp_path / "home")
    assert (codex.host.shell, codex.host.timezone) == (machine_shell(), machine_timezone())


async def test_every_failure_is_a_typed_codex_error_of_its_cause_class(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"

    async def failure(
        codex: Codex,
        cwd: Path = work,
        input: Any = "hi",
        output_schema: dict[str, Any] | None = None,
        **settings: Any,
    ) -> CodexError:
        thread = codex.start_thread(working_directory=cwd, **settings)
        with pytest.raises(CodexError) as info:
            await thread.run(input, output_schema=output_schema)
        return info.value

    cases: list[tuple[CodexError, type[CodexError], type[MiniCodexError]]] = [
        (
            await failure(Codex(home=home, model=script(tmp_path), sandbox_mode="bogus")),
            CodexConfigError,
            ConfigError,
        ),
        (
            await failure(Codex(home=home, model=script(tmp_path)), sandbox_mode="open"),
            CodexInputError,
            InputError,
        ),
        (
            await failure(Codex(home=home, model=script(tmp_path)), cwd=tmp_path / "nowhere"),
            CodexInputError,
            InputError,
        ),
        (
            await failure(
                Codex(home=home, model=script(tmp_path)),
                input=[{"type": "local_image", "path": str(tmp_path / "none.png")}],
            ),
            CodexImageError,
            ImageError,
        ),
        (
            await failure(Codex(home=home, model=f"scripted:{tmp_path / 'missing.jsonl'}")),
            CodexConfigError,
            ConfigError,
        ),
        (
            await failure(Codex(home=home, model=script(tmp_path)), output_schema={"type": 3}),
            CodexOutputSchemaError,
            OutputSchemaError,
        ),
        (
            await failure(
                Codex(home=home, model=script(tmp_path)),
                output_schema={"type": "object", "required": ["x"]},
            ),
            CodexOutputSchemaError,
            OutputSchemaError,
        ),
    ]
    for error, sdk_class, cause_class in cases:
        assert (type(error), isinstance(error, cause_class)) == (sdk_class, True), error
    with pytest.raises(CodexRolloutError) as missing:
        Codex(home=home).resume_thread("nope")
    assert isinstance(missing.value, RolloutError)


async def test_a_failed_turn_is_a_turn_failed_error(tmp_path: Path) -> None:
    failing = [{"error": {"kind": "invalid_request", "message": "boom"}}]
    work = tmp_path / "work"
    work.mkdir()
    thread = Codex(home=tmp_path / "home", model=script(tmp_path, failing)).start_thread(
        working_directory=work
    )
    with pytest.raises(TurnFailedError) as info:
        await thread.run("hi")
    assert "boom" in str(info.value)
