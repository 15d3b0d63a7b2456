"""The real Codex CLI as the client of ``mini-codex exec-server``: a routed command runs on ours."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from fake_openai_server import responses_events, serve, sse_reply, usage


def _call(n: int, args: dict[str, str]) -> dict[str, object]:
    return {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": f"call_{n}",
        "name": "exec_command",
        "arguments": json.dumps(args),
    }


def test_codex_cli_routes_a_command_to_our_executor(codex: Path, mini_ws: str) -> None:
    root = Path(__file__).resolve().parents[2] / ".test-tmp"  # Codex refuses helpers under /tmp
    root.mkdir(exist_ok=True)
    import tempfile

    with tempfile.TemporaryDirectory(dir=root) as name:
        tmp = Path(name)
        home, work = tmp / "home", tmp / "work"
        home.mkdir()
        work.mkdir()
        message = {
            "type": "message",
            "id": "m",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "done", "annotations": []}],
        }
        replies = [
            sse_reply(
                responses_events(
                    [_call(1, {"cmd": "echo remote:$PROBE_VAR", "environment_id": "worker"})],
                    response_id="r1",
                    usage=usage(10, 1),
                )
            ),
            sse_reply(
                responses_events(
                    [_call(2, {"cmd": "echo local:$PROBE_VAR"})],
                    response_id="r2",
                    usage=usage(10, 1),
                )
            ),
            sse_reply(responses_events([message], response_id="r3", usage=usage(10, 1))),
        ]
        with serve(replies) as model:
            (home / "config.toml").write_text(
                f'model = "gpt-5.5"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
                f'name = "fake"\nbase_url = "{model.url}"\nwire_api = "responses"\n'
                "request_max_retries = 0\nstream_max_retries = 0\n"
            )
            (home / "environments.toml").write_text(
                f'default = "local"\ninclude_local = true\n\n[[environments]]\nid = "worker"\n'
                f'url = "{mini_ws}"\n'
            )
            env = {
                **os.environ,
                "CODEX_HOME": str(home),
                "CODEX_API_KEY": "test",
                "PROBE_VAR": "client-side",
            }
            done = subprocess.run(
                [
                    str(codex),
                    "exec",
                    "--json",
                    "--skip-git-repo-check",
                    "--dangerously-bypass-approvals-and-sandbox",
                    "-C",
                    str(work),
                    "go",
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            last = model.requests[-1].body["input"]
    outputs = {
        item["call_id"]: item["output"].rsplit("Output:\n", 1)[-1]
        for item in last
        if item.get("type") == "function_call_output"
    }
    assert outputs == {"call_1": "remote:executor-side\n", "call_2": "local:client-side\n"}
