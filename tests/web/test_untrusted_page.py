"""Rollouts are untrusted: a rollout full of script payloads renders as text, in the live page and
in an ``rollout inspect --html`` export, in a real headless Chromium.

Each page is checked twice: as served (with its Content-Security-Policy), and with the CSP
bypassed, so the escaping alone is tested too (the CSP is the second line of defence). No payload
may run (``window.__pwned`` stays unset) and none may become markup (no ``<img>``, no ``<svg>`` but
the token chart, no element with an ``on*`` attribute); the payload text is shown as text.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_rollout import ALL, SESSION_ID, TOOL, write_hostile
from inspector_server import MINI_CODEX, Server, serve
from playwright.sync_api import Browser, Page, expect, sync_playwright
from test_browser import CHROMIUM, FLAGS

_MARKUP = """() => ({
  pwned: window.__pwned === undefined ? null : String(window.__pwned),
  imgs: document.querySelectorAll("img").length,
  svgs: [...document.querySelectorAll("svg")].filter((s) => s.id !== "token-chart").length,
  handlers: [...document.querySelectorAll("*")].filter(
    (n) => [...n.attributes].some((a) => a.name.toLowerCase().startsWith("on"))).length,
  scripts: document.querySelectorAll("script").length,
})"""


@pytest.fixture(scope="module")
def rollout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hostile") / "home"
    name = f"rollout-2026-09-01T10-00-00-{SESSION_ID}.jsonl"
    return write_hostile(home / "sessions" / "2026" / "09" / "01" / name)


@pytest.fixture(scope="module")
def server(rollout: Path) -> Iterator[Server]:
    yield from serve(rollout.parents[4])


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


def _page(browser: Browser, bypass_csp: bool) -> Page:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=bypass_csp)
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


def _visit_every_step(page: Page) -> None:
    steps = page.locator(".step")
    expect(steps).to_have_count(3)
    names: list[str] = []
    for index in range(steps.count()):
        steps.nth(index).click()
        expect(page.locator("#step h2")).to_contain_text(f"step {index + 1} ")
        expect(page.locator("#ws-browser")).to_be_visible()
        for summary in page.locator("#step details summary").all():
            summary.click()
        names += page.locator(".tool-call b").all_inner_texts()
    assert names == [TOOL, "apply_patch"]


def _assert_inert(page: Page, scripts: int) -> None:
    page.wait_for_timeout(300)  # an image's onerror fires once its load fails
    assert page.evaluate(_MARKUP) == {
        "pwned": None,
        "imgs": 0,
        "svgs": 0,
        "handlers": 0,
        "scripts": scripts,
    }


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "csp-bypassed"])
def test_the_live_page_shows_payloads_as_text(
    browser: Browser, server: Server, bypass_csp: bool
) -> None:
    page = _page(browser, bypass_csp)
    try:
        page.goto(server.url)
        row = page.locator("tr.session-row")
        expect(row).to_have_count(1)
        expect(row.locator("td").nth(2)).to_have_text(ALL)  # the cwd, as text
        _assert_inert(page, scripts=1)
        row.click()
        expect(page.locator(".turn h3 .muted")).to_contain_text(ALL)
        _visit_every_step(page)
        expect(page.locator("#warnings")).to_be_attached()
        _assert_inert(page, scripts=1)
    finally:
        page.context.close()


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "csp-bypassed"])
def test_an_export_shows_payloads_as_text(
    browser: Browser, rollout: Path, tmp_path: Path, bypass_csp: bool
) -> None:
    out = tmp_path / "hostile.html"
    result = subprocess.run(
        [str(MINI_CODEX), "rollout", "inspect", str(rollout), "--html", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    page = _page(browser, bypass_csp)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(out.as_uri())
        _visit_every_step(page)
        # The data block (not a script that runs) and app.js.
        _assert_inert(page, scripts=2)
        assert errors == []
    finally:
        page.context.close()


def test_the_server_and_the_export_send_a_csp_without_inline_script(
    server: Server, rollout: Path, tmp_path: Path
) -> None:
    import urllib.request

    for path in ("/", "/static/app.js", "/api/sessions"):
        with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=30) as response:
            csp = response.headers["content-security-policy"]
        assert "script-src 'self';" in csp
        assert "unsafe-inline" not in csp
        assert "default-src 'none'" in csp
    out = tmp_path / "export.html"
    subprocess.run(
        [str(MINI_CODEX), "rollout", "inspect", str(rollout), "--html", str(out)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    html = out.read_text()
    head = html[: html.index("</head>")]
    assert 'http-equiv="Content-Security-Policy"' in head
    assert "script-src 'sha256-" in head
    assert "unsafe-inline" not in head
    data = html[html.index('id="mini-codex-data">') : html.index("</script>")]
    assert "<" not in data.split(">", 1)[1]  # every < of the rollout is \u003c
