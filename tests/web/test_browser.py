"""The inspector in a real headless Chromium (Playwright + Debian's ``chromium``; no download).

One browser and one server per module, against a home holding a scripted ``mini-codex exec``
session, golden-corpus files (a rollback, a Codex CLI session) and a session that grows while
the page is open. Screenshots go to ``test-artifacts/ui/`` (gitignored) for review.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspector_server import (
    FIXTURES,
    MINI_CODEX,
    Server,
    install,
    run_scripted_session,
    serve,
    start_server,
)
from playwright.sync_api import Browser, Page, expect, sync_playwright

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui"
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--metrics-recording-only",
]
LIVE_FILE = (
    FIXTURES / "codex" / "codex-exec-0.169.0-2026-11-local-fake-server-exec-command-20-steps.jsonl"
)
LIVE_ID = "01a228ca-5f9c-7353-9ff4-83a8bc52a40e"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home, _ = run_scripted_session(tmp_path_factory.mktemp("browser"))
    install(home, FIXTURES / "features" / "rollback.jsonl")
    install(home, FIXTURES / "codex" / "codex-0.47.0-2025-10-gpt5-codex-pomodoro-apply-patch.jsonl")
    return home


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[Server]:
    yield from serve(home)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_the_list_shows_every_session_and_searches_and_sorts(page: Page, server: Server) -> None:
    page.goto(server.url)
    rows = page.locator("tr.session-row")
    expect(rows).to_have_count(3)
    shot(page, "01-list")
    page.fill("#search", "greet")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("greet me")
    page.fill("#search", "")
    page.select_option("#sort", "turns")
    expect(rows).to_have_count(3)
    turns = [int(text) for text in rows.locator("td:nth-child(4)").all_inner_texts()]
    assert turns == sorted(turns, reverse=True)


def test_a_step_shows_its_world_state_diff_tool_output_patch_and_request(
    page: Page, server: Server
) -> None:
    page.goto(server.url)
    page.fill("#search", "greet")
    page.locator("tr.session-row").first.click()
    steps = page.locator(".step")
    expect(steps).to_have_count(3)
    expect(page.locator("#token-chart")).to_be_visible()
    # Step 1: the apply_patch call, its diff and its output.
    steps.nth(0).click()
    call = page.locator(".tool-call").first
    expect(call).to_contain_text("apply_patch")
    expect(call.locator(".patch .add")).to_have_text("+hello from the script")
    expect(call.locator(".tool-output")).to_contain_text("Success. Updated the following files")
    # Step 2: the file the patch created is new in the world state; the shell call read it.
    steps.nth(1).click()
    expect(steps.nth(1)).to_have_class("step selected")
    added = page.locator("#ws-diff .diff-row.add")
    expect(added).to_have_count(1)
    expect(added).to_contain_text("workspace.files.hello.txt")
    expect(page.locator("#ws-diff .diff-row.change")).to_have_count(2)
    expect(page.locator(".tool-output").first).to_contain_text("hello from the script")
    page.locator("#request summary").click()
    expect(page.locator("#request")).to_contain_text("<workspace_files>")
    page.locator('.ws-section[data-section="workspace"] summary').click()
    expect(page.locator('.ws-section[data-section="workspace"] pre')).to_contain_text("hello.txt")
    shot(page, "02-step")


def test_rolled_back_turns_are_marked(page: Page, server: Server) -> None:
    page.goto(server.url)
    page.fill("#search", "first")
    page.locator("tr.session-row").first.click()
    expect(page.locator(".turn.rolled-back")).to_have_count(2)
    expect(page.locator(".turn.rolled-back").first).to_contain_text("rolled back at L22")
    shot(page, "03-rollback")


def test_a_live_session_grows_while_the_page_is_open(
    page: Page, server: Server, home: Path
) -> None:
    lines = LIVE_FILE.read_bytes().splitlines(keepends=True)
    target = install(home, LIVE_FILE, "live.jsonl")
    target.write_bytes(b"".join(lines[:30]))
    page.goto(server.url + f"#/s/{LIVE_ID}")
    steps = page.locator(".step")
    expect(steps.first).to_be_visible()
    before = steps.count()
    with target.open("ab") as handle:
        for start in range(30, len(lines), 20):
            handle.write(b"".join(lines[start : start + 20]))
            handle.flush()
            time.sleep(0.3)
    expect(steps).to_have_count(21, timeout=20_000)
    assert before < 21
    expect(page.locator("#live-status")).to_contain_text("updated")
    shot(page, "04-live")


def test_a_non_loopback_bind_refuses_the_page_without_its_token(page: Page, home: Path) -> None:
    server = start_server(home, "--host", "127.0.0.2")
    try:
        bare = server.url.split("?")[0]
        response = page.goto(bare)
        assert response is not None
        assert response.status == 401
        expect(page.locator("body")).to_contain_text("unauthorized")
        shot(page, "05-refused")
        response = page.goto(server.url)
        assert response is not None
        assert response.status == 200
        # The cookie the token URL set lets the page's own API calls through.
        page.fill("#search", "greet")
        expect(page.locator("tr.session-row")).to_have_count(1)
    finally:
        server.stop()


def test_the_html_export_opens_offline_from_disk(page: Page, tmp_path: Path) -> None:
    out = tmp_path / "session.html"
    result = subprocess.run(
        [str(MINI_CODEX), "rollout", "inspect", str(LIVE_FILE), "--html", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    html = out.read_text()
    assert re.findall(r"""(?:src|href)=["']?https?:""", html) == []
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(out.as_uri())
    steps = page.locator(".step")
    expect(steps).to_have_count(21)
    steps.nth(4).click()
    expect(page.locator(".tool-call .tool-output")).to_contain_text("Process exited with code 0")
    page.locator("#request summary").click()
    expect(page.locator("#request")).to_contain_text("run true 20 times")
    shot(page, "06-export")
    assert requests == [out.as_uri()]


def test_a_large_file_opens_at_its_newest_window_and_pages_back(page: Page, tmp_path: Path) -> None:
    home = tmp_path / "home"
    install(home, FIXTURES / "features" / "checkpoint.jsonl")
    for server in serve(home, "--whole-file-bytes", "0"):
        page.goto(server.url + "#/s/01900000-0000-7000-8000-0000000000f1")
        expect(page.locator(".turn")).to_have_count(1)
        expect(page.locator(".turn")).to_contain_text("turn-2")
        page.locator("#earlier").click()
        expect(page.locator(".turn")).to_contain_text("turn-1")
        expect(page.locator(".marker.checkpoint")).to_have_count(0)
        expect(page.locator("#earlier")).to_have_count(0)
        page.locator(".step").first.click()
        expect(page.locator("#ws-diff")).to_contain_text("env")
        shot(page, "07-paged")
        page.locator("#newest").click()
        expect(page.locator(".turn")).to_contain_text("turn-2")
        expect(page.locator("#earlier")).to_have_count(1)


def test_the_token_chart_marks_compactions(page: Page, tmp_path: Path) -> None:
    lines = (FIXTURES / "features" / "compaction_window.jsonl").read_bytes().splitlines()

    def usage(total: int) -> bytes:
        info = {"last_token_usage": {"input_tokens": total - 10, "output_tokens": 10}}
        info["last_token_usage"]["total_tokens"] = total
        payload = {"type": "token_count", "info": info}
        line = {"timestamp": "2026-09-01T10:00:00.020Z", "type": "event_msg", "payload": payload}
        return json.dumps(line, separators=(",", ":")).encode()

    # After each assistant message (lines 7 and 12), the token count of its request.
    grown = [*lines[:7], usage(900), *lines[7:12], usage(400), *lines[12:]]
    home = tmp_path / "home"
    install(home, FIXTURES / "features" / "compaction_window.jsonl").write_bytes(
        b"\n".join(grown) + b"\n"
    )
    for server in serve(home):
        page.goto(server.url + "#/s/01900000-0000-7000-8000-0000000000f1")
        expect(page.locator("#token-chart rect.bar")).to_have_count(2)
        expect(page.locator("#token-chart line.compaction")).to_have_count(1)
        expect(page.locator(".marker.compaction")).to_contain_text("compacted L9")
        page.locator("#token-chart rect.bar").nth(1).click()
        expect(page.locator(".step.selected")).to_contain_text("400 tok")
        shot(page, "08-compaction")
