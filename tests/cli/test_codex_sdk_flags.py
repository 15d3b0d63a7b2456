"""The flags and config keys the Codex TypeScript SDK passes to ``exec`` (``cli/codex_flags.py``,
``env.py``), one by one: ``exec resume`` with options on both sides, ``--add-dir`` (a real
writable root under the bubblewrap sandbox), ``openai_base_url``, ``CODEX_API_KEY`` versus
``OPENAI_API_KEY``, the config keys ``approval_policy`` / ``sandbox_workspace_write.network_access``
/ ``model_reasoning_effort``, the accepted-but-unsupported ones (one warning each) and unknown
options (one error line). The whole SDK run is ``test_typescript_sdk.py``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from mini_codex.cli.main import app

REPO = Path(__file__).parents[2]
sys.path[:0] = [str(REPO / "tests" / "models")]

import fake_openai_server as fake  # noqa: E402

runner = CliRunner()


def script(path: Path, *lines: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def say(text: str) -> dict[str, Any]:
    return {"output": [{"type": "message", "content": text}], "end_turn": True}


def invoke(tmp_path: Path, args: list[str], stdin: str | None = None, **env: str | None) -> Result:
    environ: dict[str, str | None] = {
        "MINI_CODEX_HOME": str(tmp_path / "home"),
        "OPENAI_API_KEY": None,
        "CODEX_API_KEY": None,
        "OPENAI_BASE_URL": None,
        **env,
    }
    return runner.invoke(app, args, env=environ, input=stdin)


def rollout_lines(tmp_path: Path) -> list[dict[str, Any]]:
    (path,) = sorted((tmp_path / "home").glob("sessions/**/rollout-*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def turn_contexts(tmp_path: Path) -> list[dict[str, Any]]:
    return [line["payload"] for line in rollout_lines(tmp_path) if line["type"] == "turn_context"]


def user_inputs(tmp_path: Path) -> list[str]:
    return [
        line["payload"]["message"]
        for line in rollout_lines(tmp_path)
        if line["type"] == "event_msg" and line["payload"]["type"] == "user_message"
    ]


def test_exec_resume_takes_options_before_and_after_the_word_and_the_prompt_from_stdin(
    tmp_path: Path,
) -> None:
    model = f"scripted:{script(tmp_path / 's.jsonl', say('one'))}"
    first = invoke(tmp_path, ["exec", "--experimental-json", "-m", model, "-C", str(tmp_path), "a"])
    assert (first.exit_code, first.stderr) == (0, "")
    events = [json.loads(line) for line in first.stdout.splitlines()]
    thread_id = events[0]["thread_id"]
    assert events[0] == {"type": "thread.started", "thread_id": thread_id}

    # The SDK's order: exec-level options, `resume ID`, then --image; the prompt on stdin.
    image = tmp_path / "pixel.png"
    sys.path.insert(0, str(REPO / "tests"))
    from image_files import png

    image.write_bytes(png(1, 1))
    args = ["exec", "--experimental-json", "--config", 'approval_policy="never"', "-m", model,
            "--cd", str(tmp_path), "--skip-git-repo-check", "resume", thread_id,
            "--image", str(image)]  # fmt: skip
    second = invoke(tmp_path, args, stdin="b from stdin")
    assert (second.exit_code, second.stderr) == (0, "")
    events = [json.loads(line) for line in second.stdout.splitlines()]
    assert events[0] == {"type": "thread.started", "thread_id": thread_id}
    assert events[-1]["type"] == "turn.completed"

    # --last, the prompt as the argument after it.
    third = invoke(tmp_path, ["exec", "-m", model, "-C", str(tmp_path), "resume", "--last", "c"])
    assert (third.exit_code, third.stderr) == (0, "")
    assert user_inputs(tmp_path) == ["a", "b from stdin", "c"]
    assert [context["approval_policy"] for context in turn_contexts(tmp_path)][1] == "never"


def test_exec_resume_without_a_prompt_never_opens_the_ui(tmp_path: Path) -> None:
    model = f"scripted:{script(tmp_path / 's.jsonl', say('one'))}"
    assert invoke(tmp_path, ["exec", "-m", model, "-C", str(tmp_path), "a"]).exit_code == 0
    result = invoke(tmp_path, ["exec", "-m", model, "-C", str(tmp_path), "resume", "--last"])
    assert (result.exit_code, result.stderr) == (
        2,
        "error: a prompt is required (as an argument, or on stdin with '-')\n",
    )


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_add_dir_is_a_writable_root_of_the_workspace_write_sandbox(tmp_path: Path) -> None:
    work, extra, other = tmp_path / "work", tmp_path / "extra", tmp_path / "other"
    for path in (work, extra, other):
        path.mkdir()
    command = f"touch {extra}/made && touch {other}/made"
    call = {"type": "function_call", "name": "shell", "arguments": {"command": command}}
    model = f"scripted:{script(tmp_path / 's.jsonl', {'output': [call]}, say('done'))}"
    # /tmp (where tmp_path is) is writable under workspace-write unless excluded.
    args = ["exec", "-m", model, "-C", str(work), "-s", "workspace-write", "--add-dir",
            str(extra), "-c", "sandbox_workspace_write.exclude_slash_tmp=true",
            "-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true", "touch both"]  # fmt: skip
    result = invoke(tmp_path, args)
    assert result.exit_code == 0, result.stderr
    assert (extra / "made").exists()
    assert not (other / "made").exists()  # the sandbox still confines everything else
    (context,) = turn_contexts(tmp_path)
    assert context["sandbox_policy"]["writable_roots"] == [str(extra)]


def test_add_dir_problems_are_one_line_each(tmp_path: Path) -> None:
    model = f"scripted:{script(tmp_path / 's.jsonl', say('one'), say('two'))}"
    base = ["exec", "-m", model, "-C", str(tmp_path)]
    missing = invoke(tmp_path, [*base, "--add-dir", str(tmp_path / "nope"), "go"])
    assert (missing.exit_code, missing.stderr) == (
        2,
        f"error: --add-dir {tmp_path / 'nope'}: not a directory\n",
    )
    read_only = invoke(tmp_path, [*base, "-s", "read-only", "--add-dir", str(tmp_path), "go"])
    assert (read_only.exit_code, read_only.stderr) == (
        0,
        "warning: --add-dir has no effect: the sandbox is read-only (nothing is writable)\n",
    )


def test_config_keys_the_sdk_sets_reach_the_turn_context(tmp_path: Path) -> None:
    model = f"scripted:{script(tmp_path / 's.jsonl', say('one'))}"
    args = ["exec", "-m", model, "-C", str(tmp_path), "-s", "workspace-write",
            "--config", 'approval_policy="untrusted"',
            "--config", "sandbox_workspace_write.network_access=true",
            "--config", 'model_reasoning_effort="high"',
            "--config", 'web_search="disabled"', "go"]  # fmt: skip
    result = invoke(tmp_path, args)
    assert (result.exit_code, result.stderr) == (0, "")
    (context,) = turn_contexts(tmp_path)
    assert (context["approval_policy"], context["sandbox_policy"]["network_access"]) == (
        "untrusted",
        True,
    )
    assert context["effort"] == "high"


def test_accepted_but_unsupported_flags_warn_once_each(tmp_path: Path) -> None:
    model = f"scripted:{script(tmp_path / 's.jsonl', say('one'))}"
    args = ["exec", "-m", model, "-C", str(tmp_path), "--thread-source", "sdk",
            "--cyber-access-program", "research", "--config", 'web_search="live"',
            "go"]  # fmt: skip
    result = invoke(tmp_path, args)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "warning: --thread-source 'sdk' is not recorded: mini-codex has no thread sources",
        "warning: --cyber-access-program 'research' is not supported by mini-codex: the turn "
        "runs with the server's defaults",
        'warning: web_search = "live" is not supported: mini-codex does not offer Codex\'s '
        "hosted web_search tool, so the model gets no web search",
    ]


def test_unknown_options_of_exec_and_exec_resume_are_one_error_line(tmp_path: Path) -> None:
    for args, where in (
        (["exec", "--no-such-flag", "go"], "mini-codex exec"),
        (["exec", "resume", "--last", "--no-such-flag"], "mini-codex exec resume"),
        (["exec", "--model"], "mini-codex exec"),
    ):
        result = invoke(tmp_path, args)
        assert result.exit_code == 2, args
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"error: {where}: "), line
        assert line.endswith(f"(see {where} --help)"), line
        assert "Traceback" not in result.output


def _answer() -> fake.Reply:
    item = {"type": "message", "id": "m1", "role": "assistant",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}]}  # fmt: skip
    return fake.sse_reply(fake.responses_events([item], usage=fake.usage(5, 1)))


def test_codex_api_key_wins_over_openai_api_key_and_openai_base_url_over_the_env(
    tmp_path: Path,
) -> None:
    with fake.serve([_answer(), _answer(), _answer()]) as server:
        url = ["-c", f"openai_base_url={json.dumps(server.url)}"]
        dead = "http://127.0.0.1:9/v1"  # OPENAI_BASE_URL loses to the config key
        turn = ["exec", "-C", str(tmp_path), "-m", "gpt-5.5", "hi"]
        both = invoke(
            tmp_path,
            [turn[0], *url, *turn[1:]],
            OPENAI_BASE_URL=dead,
            CODEX_API_KEY="sk-codex",
            OPENAI_API_KEY="sk-openai",
        )
        openai_only = invoke(tmp_path, [turn[0], *url, *turn[1:]], OPENAI_API_KEY="sk-openai")
        codex_only = invoke(tmp_path, turn, OPENAI_BASE_URL=server.url, CODEX_API_KEY="sk-codex")
    assert [r.exit_code for r in (both, openai_only, codex_only)] == [0, 0, 0], both.stderr
    assert [r.headers["authorization"] for r in server.requests] == [
        "Bearer sk-codex",
        "Bearer sk-openai",
        "Bearer sk-codex",
    ]


def test_a_rejected_codex_api_key_names_the_variable_it_came_from(tmp_path: Path) -> None:
    reply = fake.error_reply(401, {"message": "bad key", "code": "invalid_api_key"})
    with fake.serve([reply]) as server:
        result = invoke(
            tmp_path,
            ["exec", "--json", "-C", str(tmp_path), "-m", "gpt-5.5", "hi"],
            OPENAI_BASE_URL=server.url,
            CODEX_API_KEY="sk-bad",
        )
    assert result.exit_code == 1
    failed = json.loads(result.stdout.splitlines()[-1])
    assert failed["type"] == "turn.failed"
    assert failed["error"]["message"].endswith("(the key is read from CODEX_API_KEY)")
