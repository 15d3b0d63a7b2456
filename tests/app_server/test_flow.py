"""The issue's flow against ``mini-codex app-server`` (stdio), every message schema-checked."""

from __future__ import annotations

from pathlib import Path

from app_server_checks import check_flow
from app_server_flow import fake, flow_replies, mini_side, run_flow


def test_flow_against_mini_codex(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with fake.serve(flow_replies()) as server:
        result = run_flow(mini_side(tmp_path / "home", server.url), work)
        requests = list(server.requests)
    check_flow(result, work, requests)
