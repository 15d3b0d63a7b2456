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


def start_server(home: Path, *args: str) -> Server:
    process = subprocess.Popen(
        [str(MINI_CODEX), "ui", "--port", "0", *args],
        env=clean_env(home),
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


def serve(home: Path, *args: str) -> Iterator[Server]:
    server = start_server(home, *args)
    try:
        yield server
    finally:
        server.stop()


def install(home: Path, source: Path, name: str | None = None) -> Path:
    target = home / "sessions" / "2026" / "01" / "01" / f"rollout-{name or source.name}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target
