"""Shared helpers of the inspector tests: a real ``mini-codex ui`` server on a temporary home."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MINI_CODEX = Path(sys.executable).parent / "mini-codex"
FIXTURES = Path(__file__).parent.parent / "fixtures" / "rollouts"


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MINI_CODEX_"))}
    env["MINI_CODEX_HOME"] = str(home)
    return env


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]

    def get(self, path: str, token: str | None = None) -> tuple[int, Any]:
        url = self.url.split("?")[0].rstrip("/") + path
        if token is not None:
            url += ("&" if "?" in url else "?") + f"token={token}"
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def start_server(home: Path, *args: str, env: dict[str, str] | None = None) -> Server:
    process = subprocess.Popen(
        [str(MINI_CODEX), "ui", "--port", "0", *args],
        env={**clean_env(home), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    if not first.startswith("http://"):
        process.kill()
        raise AssertionError(f"no URL on the first line: {first!r} {process.stderr.read()!r}")
    return Server(first, process)


def serve(home: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    server = start_server(home, *args, env=env)
    try:
        yield server
    finally:
        server.stop()


def install(home: Path, source: Path, name: str | None = None) -> Path:
    target = home / "sessions" / "2026" / "01" / "01" / f"rollout-{name or source.name}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello from the script\n*** End Patch\n"
SCRIPT = [
    {
        "output": [{"type": "function_call", "name": "apply_patch", "arguments": {"input": PATCH}}],
        "usage": {"input_tokens": 1200, "output_tokens": 40},
    },
    {
        "output": [
            {"type": "function_call", "name": "shell", "arguments": {"command": "cat hello.txt"}}
        ],
        "usage": {"input_tokens": 1350, "output_tokens": 25},
    },
    {
        "output": [{"type": "message", "content": "hello.txt says hello."}],
        "end_turn": True,
        "usage": {"input_tokens": 1420, "output_tokens": 12},
    },
]
"""Three steps: a patch that adds a file, a shell call that reads it, the answer."""


def run_scripted_session(root: Path) -> tuple[Path, list[dict[str, Any]]]:
    """``mini-codex exec`` with the scripted model and ``--trace-requests``: (home, requests)."""
    work = root / "work"
    work.mkdir()
    home = root / "home"
    script = root / "script.jsonl"
    script.write_text("".join(json.dumps(line) + "\n" for line in SCRIPT))
    trace = root / "trace.jsonl"
    args = ["exec", "--model", f"scripted:{script}", "--trace-requests", str(trace)]
    result = subprocess.run(
        [str(MINI_CODEX), *args, "--cd", str(work), "greet me"],
        env=clean_env(home),
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    return home, [json.loads(line) for line in trace.read_text().splitlines()]


RESUME_SCRIPT = [
    {"output": [{"type": "function_call", "name": "shell", "arguments": {"command": "touch two"}}]},
    {"output": [{"type": "message", "content": "done"}], "end_turn": True},
]
"""A second turn (``resume --last``): a shell call that creates a file, then the answer."""


def resume_scripted_session(root: Path, home: Path) -> list[dict[str, Any]]:
    """``mini-codex resume --last`` on ``home`` with ``--trace-requests``: the requests."""
    script = root / "resume.jsonl"
    script.write_text("".join(json.dumps(line) + "\n" for line in RESUME_SCRIPT))
    trace = root / "trace-resume.jsonl"
    args = ["resume", "--last", "--model", f"scripted:{script}", "--trace-requests", str(trace)]
    result = subprocess.run(
        [str(MINI_CODEX), *args, "and now a second file"],
        env=clean_env(home),
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    return [json.loads(line) for line in trace.read_text().splitlines()]
