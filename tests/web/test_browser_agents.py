"""The inspector shows sub-agents as a tree: children indented under their parent in the list,
the parent's page links its children, a child's page names its parent and shows its own steps
(real headless Chromium, as ``test_browser.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspector_server import Server, serve
from playwright.sync_api import Page, expect, sync_playwright

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "host" / "agents"))

from subagent_script import spawn_two  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def family(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Server, str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("agents")
    (root / "work").mkdir()
    parent, children = spawn_two(root / "home", root / "work")
    for server in serve(root / "home"):
        yield server, parent, children


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(15_000)
        yield page
        browser.close()


def test_children_are_a_tree_under_their_parent(
    page: Page, family: tuple[Server, str, dict[str, str]]
) -> None:
    server, parent, children = family
    page.goto(server.url)
    rows = page.locator("tr.session-row")
    expect(rows).to_have_count(3)
    firsts = rows.locator("td:first-child").all_inner_texts()
    assert firsts[0] == parent
    assert sorted(firsts[1:]) == sorted(f"└ {c} ({n})" for c, n in children.items())
    expect(page.locator("tr.child-row")).to_have_count(2)

    rows.first.click()
    links = page.locator("#family .children a")
    expect(links).to_have_count(2)
    child, nickname = next(iter(children.items()))
    page.locator("#family .children a", has_text=child).click()
    expect(page.locator("#family .parent")).to_have_text(
        f"sub-agent {nickname}, spawned by {parent}"
    )
    expect(page.locator(".step")).to_have_count(1)  # the child's own step
