"""The explorer in a real browser: Debian's Chromium, headless, driven by Playwright.

Load the page, search, click a node, move the time slider, accept a suggestion and undo it,
checking the DOM and the store after each step. Screenshots go to $SAGE_UI_ARTIFACTS (default:
the test's tmp folder); with $SAGE_UI_SCREENSHOT set, the search view is also saved there (the
README's picture: SAGE_UI_SCREENSHOT=docs/images/ui.png).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sage_memory import SageMemory
from sage_memory.types import EdgeSpec, NodeSpec
from sage_memory.ui.api import ExplorerApi
from sage_memory.ui.server import ExplorerServer

CHROMIUM = os.environ.get("SAGE_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STORY = (
    "I want to build a personal blog. First I'll design the database, then build the "
    "backend API, and finally the frontend. The backend will use Python's FastAPI."
)
QUESTION = "What should I do next on my blog's backend?"

if not Path(CHROMIUM).exists():
    pytest.skip(
        f"no Chromium at {CHROMIUM}: install it (apt-get install -y chromium) to run the "
        "browser tests of the explorer",
        allow_module_level=True,
    )
playwright = pytest.importorskip(
    "playwright.sync_api", reason="the browser tests need playwright (the dev extra)"
)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[SageMemory]:
    """The demo's blog plan, a later status, and two names of one tool (a merge to review)."""
    day1 = datetime(2026, 5, 1, 9, tzinfo=UTC)
    m = SageMemory(tmp_path / "mem", embedder="hashing")
    m.add(STORY, user_id="demo", timestamp=day1)
    m.add("The database design is done.", user_id="demo", timestamp=day1 + timedelta(days=5))
    m.add_graph(
        "I load posts.csv with pd.read_csv.",
        nodes=[NodeSpec("r", "pd.read_csv", "Tool"), NodeSpec("f", "posts.csv", "Document")],
        edges=[EdgeSpec("r", "f", "USES")],
        user_id="demo",
    )
    m.add_graph(
        "pandas.read_csv parses posts.csv into a DataFrame.",
        nodes=[
            NodeSpec("r", "pandas.read_csv", "Tool"),
            NodeSpec("f", "posts.csv", "Document"),
            NodeSpec("d", "DataFrame"),
        ],
        edges=[EdgeSpec("r", "f", "USES"), EdgeSpec("r", "d", "RESULTED_IN")],
        user_id="demo",
    )
    m.evolve(user_id="demo")
    yield m
    m.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("SAGE_UI_ARTIFACTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def drawn_nodes(page: Any) -> set[str]:
    return set(page.eval_on_selector_all("#graph .node", "gs => gs.map(g => g.dataset.id)"))


def test_search_click_time_accept_undo(mem: SageMemory, browser: Any, shots: Path) -> None:
    server = ExplorerServer(ExplorerApi(mem, user_id="demo", allow_writes=True)).start()
    errors: list[str] = []
    try:
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: errors.append(r.url) if "127.0.0.1" not in r.url else None)

        # 1. load: the whole scope's graph, drawn
        page.goto(server.url)
        page.wait_for_selector("body[data-ready='1']")
        whole = mem.graph(user_id="demo", include_expired=True)
        assert drawn_nodes(page) == {n.id for n in whole.nodes}
        assert "personal blog" in page.inner_text("#graph")
        page.screenshot(path=str(shots / "1-load.png"), full_page=True)

        # 2. search: ranked memories with their why, the context, the path highlighted
        page.fill("#q", QUESTION)
        page.click("#search-form button[type=submit]")
        page.wait_for_selector("#results li")
        expected = mem.search(QUESTION, user_id="demo")
        texts = page.eval_on_selector_all("#results li", "ls => ls.map(l => l.dataset.id)")
        assert texts == [h.memory.id for h in expected.memories]
        assert "dense" in page.inner_text("#results")  # the why
        assert "Next steps" in page.text_content("#context")
        assert page.locator("#graph .edge.on-path").count() >= 1
        assert {n.id for n in [h.node for h in expected.nodes]} <= drawn_nodes(page)
        page.screenshot(path=str(shots / "2-search.png"), full_page=True)
        if os.environ.get("SAGE_UI_SCREENSHOT"):
            page.screenshot(path=os.environ["SAGE_UI_SCREENSHOT"], full_page=False)

        # 3. click a node: aliases, provenance with dates, history of its facts
        db = mem.find_node("design the database", user_id="demo")
        page.click(f"#graph .node[data-id='{db.id}']")
        page.wait_for_selector(f"#node-name[data-id='{db.id}']")
        assert page.inner_text("#node-name") == "design the database"
        assert "2026-05-01: I want to build a personal blog" in page.inner_text("#provenance")
        assert "HAS_STATUS" in page.inner_text("#node-panel")
        page.click("#expand")  # its neighbours
        page.wait_for_selector(f"#graph[data-view='node:{db.id}']")
        around = mem.explore(db.id, user_id="demo", hops=1, include_expired=True)
        assert drawn_nodes(page) == {n.id for n in around.nodes}
        page.screenshot(path=str(shots / "3-node.png"), full_page=True)

        # 4. the time slider: the graph as it was after the first memory
        page.click("#clear")
        page.wait_for_selector("#graph[data-view='graph:0']")
        page.fill("#slider", "0")
        page.wait_for_function("() => document.querySelector('#graph').dataset.asOf !== 'now'")
        no_frame = "() => !document.querySelector('#graph').textContent.includes('DataFrame')"
        page.wait_for_function(no_frame)
        first = mem.get_all(user_id="demo")[0].created_at
        past = mem.as_of(first).graph(user_id="demo", include_expired=True)
        assert drawn_nodes(page) == {n.id for n in past.nodes}
        assert "after: I want to build" in page.inner_text("#time-label")
        page.screenshot(path=str(shots / "4-time.png"), full_page=True)
        page.click("#now")
        page.wait_for_function("() => document.querySelector('#graph').dataset.asOf === 'now'")

        # 5. accept the merge suggestion
        (merge,) = [s for s in mem.review(user_id="demo") if s.op == "merge"]
        nodes_before = mem.stats(user_id="demo")["nodes"]
        assert merge.summary in page.inner_text("#review")
        page.click(f"#review li[data-id='{merge.id}'] button.accept")
        page.wait_for_selector(f"#review li[data-id='{merge.id}']", state="detached")
        (accepted,) = mem.review(user_id="demo", status="accepted")
        assert accepted.id == merge.id and accepted.batch_id
        assert mem.stats(user_id="demo")["nodes"] == nodes_before - 1
        page.wait_for_selector(f"#runs li[data-batch='{accepted.batch_id}'] button.undo")
        page.screenshot(path=str(shots / "5-accept.png"), full_page=True)

        # 6. undo it from the journal of runs
        page.click(f"#runs li[data-batch='{accepted.batch_id}'] button.undo")
        page.wait_for_selector(
            f"#runs li[data-batch='{accepted.batch_id}'] button.undo", state="detached"
        )
        assert "(undone)" in page.inner_text(f"#runs li[data-batch='{accepted.batch_id}']")
        assert mem.stats(user_id="demo")["nodes"] == nodes_before
        names = {n.name for n in mem.graph(user_id="demo").nodes}
        assert {"pd.read_csv", "pandas.read_csv"} <= names or len(names) == nodes_before
        page.wait_for_function(
            f"() => document.querySelectorAll('#graph .node').length === {nodes_before}"
        )
        page.screenshot(path=str(shots / "6-undo.png"), full_page=True)
        assert errors == []  # no script error, no request off the machine
    finally:
        server.stop()


def test_read_only_page_disables_writes(mem: SageMemory, browser: Any, shots: Path) -> None:
    server = ExplorerServer(ExplorerApi(mem, user_id="demo")).start()
    try:
        page = browser.new_page()
        page.goto(server.url)
        page.wait_for_selector("body[data-ready='1']")
        assert page.inner_text("#mode") == "read-only"
        assert page.locator("#review button.accept").first.is_disabled()
        queued = len(mem.review(user_id="demo"))
        status = page.evaluate(
            """async () => (await fetch('/api/evolve', {method: 'POST',
                 headers: {'Content-Type': 'application/json'}, body: '{}'})).status"""
        )
        assert status == 403 and len(mem.review(user_id="demo")) == queued
        page.screenshot(path=str(shots / "read-only.png"))
    finally:
        server.stop()


def test_chromium_is_the_system_one() -> None:
    assert shutil.which("chromium") or Path(CHROMIUM).exists()


@pytest.mark.slow
def test_a_10k_node_scope_stays_usable(big_scope: SageMemory, browser: Any, shots: Path) -> None:
    server = ExplorerServer(ExplorerApi(big_scope, user_id="big")).start()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(server.url)
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#graph .node").count() == 150
        assert "of 10000" in page.inner_text("#page-info")
        page.click("#next")
        page.wait_for_selector("#graph[data-view='graph:150']")
        assert page.locator("#graph .node").count() == 150
        page.locator("#graph .node").first.click()
        page.wait_for_selector("#node-name")
        assert page.inner_text("#node-name").startswith("topic ")
        page.screenshot(path=str(shots / "10k.png"))
    finally:
        server.stop()
