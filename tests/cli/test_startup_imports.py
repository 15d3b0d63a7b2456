"""The import guard of issue 30: ``exec`` sends its first request without importing heavy modules
it does not use before it.

A real ``mini-codex exec --json`` subprocess runs with ``-X importtime`` against a local server on
127.0.0.1 that accepts the connection and reads the first byte of the request, then stops the
process. ``-X importtime`` writes each import to stderr (unbuffered) as it completes, so the
lines written by then are the modules imported before the first request byte left. The
workspace is an empty directory and ``HOME`` is empty (no ``.gitignore``, no skills, no MCP
servers configured): what a plain ``exec`` needs.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

HEAVY = (
    "openai",
    "mcp",
    "jsonschema",
    "referencing",
    "textual",
    "rich",
    "prompt_toolkit",
    "websockets",
    "yaml",
    "pathspec",
    "tiktoken",
    "sqlite3",
    "starlette",
    "uvicorn",
    "tomlkit",
    "jinja2",
    "ray",
)
"""Top-level packages ``exec`` must not import before its first request (in this workspace)."""

REPLAY = (
    "mini_codex.rollout.replay",
    "mini_codex.rollout.resume",
    "mini_codex.rollout.reader",
    "mini_codex.rollout.index",
    "zstandard",
)
"""Modules of the resume side: a new session replays nothing, so ``exec`` imports none of them
(or their submodules) before its first request."""

RUNTIME = ("mini_codex.runtime.session", "mini_codex.host.open", "httpx2")
"""Imported before the first request: their lines prove the listing is complete."""


def imports_before_first_request(tmp_path: Path, code: str) -> list[str]:
    """The modules (dotted names) ``code`` running ``exec --json hi`` imported before its first
    request byte reached the local server."""
    home, user, work = tmp_path / "home", tmp_path / "user", tmp_path / "work"
    for path in (home, user, work):
        path.mkdir()
    stderr_path = tmp_path / "importtime.txt"
    with socket.socket() as sock, stderr_path.open("wb") as stderr:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        sock.settimeout(120)
        port = sock.getsockname()[1]
        (home / "config.toml").write_text(
            'model = "gpt-5.1-codex"\nmodel_provider = "local"\n[model_providers.local]\n'
            f'name = "local"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n"
        )
        env = {**os.environ, "MINI_CODEX_HOME": str(home), "HOME": str(user)}
        child = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-c", code, "exec", "--json", "hi"],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            conn, _ = sock.accept()
            with conn:
                conn.settimeout(120)
                assert conn.recv(1)
                listing = stderr_path.read_text()
        finally:
            child.kill()
            child.wait()
    names = []
    for line in listing.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":
                names.append(name)
    return names


def heavy_among(names: list[str]) -> list[str]:
    return sorted({name for name in names if name.split(".")[0] in HEAVY})


ENTRY = "from mini_codex.cli.entry import main; main()"


def test_exec_imports_no_heavy_module_before_its_first_request(tmp_path: Path) -> None:
    started = time.monotonic()
    names = imports_before_first_request(tmp_path, ENTRY)
    assert [name for name in RUNTIME if name not in names] == [], time.monotonic() - started
    assert heavy_among(names) == []
    assert sorted({name for name in names for m in REPLAY if name.startswith(m)}) == []


@pytest.mark.parametrize("heavy", ["jsonschema", "yaml"])
def test_the_guard_sees_a_heavy_import(tmp_path: Path, heavy: str) -> None:
    names = imports_before_first_request(tmp_path, f"import {heavy}; {ENTRY}")
    assert heavy in heavy_among(names)
