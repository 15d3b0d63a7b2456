"""The same flow against the real ``codex app-server`` (CLI 0.169.0, ``node_modules``), checked
by the same code: the schema validator and the assertions accept what Codex itself writes, so
they test the right thing. Codex refuses helper binaries under /tmp: its work dirs live in the
repository's ignored ``.pytest-codex/`` folder."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_server_checks import check_flow
from app_server_flow import REPO, codex_available, codex_side, fake, flow_replies, run_flow


@pytest.fixture
def codex_dir() -> Iterator[Path]:
    path = REPO / ".pytest-codex" / uuid.uuid4().hex
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_flow_against_real_codex(codex_dir: Path) -> None:
    if not codex_available():
        pytest.skip("the Codex CLI is not installed (npm ci)")
    work = codex_dir / "work"
    work.mkdir()
    with fake.serve(flow_replies()) as server:
        result = run_flow(codex_side(codex_dir / "home", server.url), work)
        requests = list(server.requests)
    check_flow(result, work, requests, output_deltas=False)
