"""The explorer's HTTP API on a real server and a real memory: scope, read-only, token, CSRF."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from sage_memory import SageMemory
from sage_memory.types import EdgeSpec, NodeSpec
from sage_memory.ui.api import ExplorerApi
from sage_memory.ui.server import ExplorerServer


def duplicates(mem: SageMemory, user: str) -> None:
    """Two names of one tool: the evolver suggests merging them."""
    mem.add_graph(
        "I loaded sales_data.csv with pd.read_csv.",
        nodes=[NodeSpec("r", "pd.read_csv", "Tool"), NodeSpec("f", "sales_data.csv", "Document")],
        edges=[EdgeSpec("r", "f", "USES")],
        user_id=user,
    )
    mem.add_graph(
        "pandas.read_csv parses sales_data.csv into a DataFrame.",
        nodes=[
            NodeSpec("r", "pandas.read_csv", "Tool"),
            NodeSpec("f", "sales_data.csv", "Document"),
            NodeSpec("d", "DataFrame"),
        ],
        edges=[EdgeSpec("r", "f", "USES"), EdgeSpec("r", "d", "RESULTED_IN")],
        user_id=user,
    )


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[SageMemory]:
    m = SageMemory(tmp_path / "mem", embedder="hashing")
    duplicates(m, "ana")
    duplicates(m, "bob")
    m.add_graph(
        "Bob's secret project uses Rust.",
        nodes=[NodeSpec("p", "secret project", "Project"), NodeSpec("r", "Rust", "Tool")],
        edges=[EdgeSpec("p", "r", "USES")],
        user_id="bob",
    )
    m.evolve(user_id="ana")
    m.evolve(user_id="bob")
    yield m
    m.close()


def serve(mem: SageMemory, *, writes: bool) -> ExplorerServer:
    return ExplorerServer(ExplorerApi(mem, user_id="ana", allow_writes=writes)).start()


def call(
    server: ExplorerServer,
    path: str,
    body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server.url.rstrip("/") + path, data=data, headers=headers or {})
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            raw = res.read()
            ctype = res.headers["Content-Type"]
            return res.status, json.loads(raw) if "json" in ctype else raw.decode()
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def merge_id(server: ExplorerServer) -> str:
    _, review = call(server, "/api/review")
    (s,) = [s for s in review["suggestions"] if s["op"] == "merge"]
    return str(s["id"])


def test_binds_loopback_and_serves_the_page_and_its_assets(mem: SageMemory) -> None:
    server = serve(mem, writes=False)
    try:
        assert server.server_address[0] == "127.0.0.1"
        status, page = call(server, "/")
        assert status == 200 and 'src="/static/app.js"' in page and "user_id=ana" in page
        assert 'name="sage-token" content=""' in page  # read-only: no token handed out
        assert call(server, "/static/app.js")[0] == 200
        status, info = call(server, "/api/info")
        assert status == 200 and info["scope"] == {"user_id": "ana", "agent_id": None}
        assert info["allow_writes"] is False and len(info["times"]) == 2
        assert call(server, "/api/nothing")[0] == 404
    finally:
        server.stop()


def test_one_scope_per_page_never_shows_another(mem: SageMemory) -> None:
    server = serve(mem, writes=True)
    try:
        _, graph = call(server, "/api/graph")
        assert "pandas.read_csv" in graph["svg"] and "secret project" not in graph["svg"]
        _, found = call(server, "/api/search?q=secret+project+Rust")
        assert found["query"] == "secret project Rust"
        assert "Bob's" not in json.dumps(found) and "secret project" not in found["svg"]
        bob_node = mem.find_node("secret project", user_id="bob").id
        assert call(server, f"/api/node?id={bob_node}")[0] == 404
        assert call(server, f"/api/expand?id={bob_node}")[0] == 404
        bob_merge = mem.review(user_id="bob")[0].id
        headers = {"X-Sage-Token": server.token}
        assert call(server, "/api/accept", {"id": bob_merge}, headers)[0] == 404
        assert mem.review(user_id="bob")[0].status == "open"
    finally:
        server.stop()


def test_read_only_by_default(mem: SageMemory) -> None:
    server = serve(mem, writes=False)
    try:
        status, err = call(server, "/api/accept", {"id": merge_id(server)}, {"X-Sage-Token": "x"})
        assert status == 403 and "--allow-writes" in err["error"]
        assert len(mem.review(user_id="ana")) == 1
    finally:
        server.stop()


def test_writes_need_the_token_and_a_same_site_json_request(mem: SageMemory) -> None:
    server = serve(mem, writes=True)
    try:
        sid = merge_id(server)
        assert call(server, "/api/accept", {"id": sid})[0] == 403  # no token
        assert call(server, "/api/accept", {"id": sid}, {"X-Sage-Token": "wrong"})[0] == 403
        good = {"X-Sage-Token": server.token}
        evil = {**good, "Origin": "http://evil.example"}
        assert call(server, "/api/accept", {"id": sid}, evil)[0] == 403
        site = {**good, "Sec-Fetch-Site": "cross-site"}
        assert call(server, "/api/accept", {"id": sid}, site)[0] == 403
        rebound = {**good, "Host": "evil.example:80"}
        assert call(server, "/api/accept", {"id": sid}, rebound)[0] == 421
        assert call(server, "/api/info", headers={"Host": "evil.example"})[0] == 421
        assert mem.review(user_id="ana")[0].status == "open"  # nothing got through

        nodes = mem.stats(user_id="ana")["nodes"]
        same = {**good, "Origin": server.url.rstrip("/")}
        status, done = call(server, "/api/accept", {"id": sid}, same)
        assert status == 200 and done["changes"] > 0
        assert mem.review(user_id="ana") == []
        assert mem.stats(user_id="ana")["nodes"] == nodes - 1  # merged
        _, review = call(server, "/api/review")
        assert done["batch_id"] in {r["batch_id"] for r in review["runs"] if r["undoable"]}
        status, undone = call(server, "/api/undo", {"id": done["batch_id"]}, good)
        assert status == 200 and undone["changes"] > 0
        assert mem.stats(user_id="ana")["nodes"] == nodes  # both names are back
        bob_batch = mem.accept(mem.review(user_id="bob")[0].id)[0].batch_id
        assert call(server, "/api/undo", {"id": bob_batch}, good)[0] == 404  # not this scope
    finally:
        server.stop()


def test_node_details_and_time_travel(mem: SageMemory) -> None:
    server = serve(mem, writes=False)
    try:
        node = mem.find_node("sales_data.csv", user_id="ana")
        status, info = call(server, f"/api/node?id={node.id}")
        assert status == 200 and info["name"] == "sales_data.csv"
        assert {m["text"][:8] for m in info["memories"]} == {"I loaded", "pandas.r"}
        assert {f["relation"] for f in info["facts"]} == {"USES"} and info["journal"]
        _, times = call(server, "/api/info")
        first = times["times"][0]["at"]
        _, then = call(server, f"/api/graph?as_of={quote(first)}")
        assert "pd.read_csv" in then["svg"] and "DataFrame" not in then["svg"]
        assert call(server, "/api/graph?as_of=yesterday")[0] == 400
    finally:
        server.stop()


def test_stats_plot_runs_started_from_the_page(mem: SageMemory) -> None:
    server = serve(mem, writes=True)
    try:
        _, before = call(server, "/api/stats")
        assert before["runs_plotted"] == 1 and len(before["plots"]) == 6  # the last run's quality
        status, run = call(server, "/api/evolve", {}, {"X-Sage-Token": server.token})
        assert status == 200 and run["batch_id"]
        call(server, "/api/evolve", {}, {"X-Sage-Token": server.token})
        _, after = call(server, "/api/stats")
        assert after["runs_plotted"] == 2 and 'data-points="2"' in after["plots"][0]
    finally:
        server.stop()


@pytest.mark.slow
def test_a_10k_node_scope_is_sampled_and_paged(big_scope: SageMemory) -> None:
    server = ExplorerServer(ExplorerApi(big_scope, user_id="big")).start()
    try:
        status, first = call(server, "/api/graph")
        assert status == 200 and first["total_nodes"] == 10_000 and first["shown"] == 150
        assert first["svg"].count('class="node') == 150
        _, second = call(server, "/api/graph?offset=150")
        assert second["offset"] == 150 and second["shown"] == 150
        assert call(server, "/api/graph?limit=100000")[1]["shown"] == 150  # never the whole
        _, found = call(server, "/api/search?q=topic+42")
        assert found["memories"] and found["svg"].count('class="node') <= 150
        node = big_scope.find_node("topic 42", user_id="big")
        _, around = call(server, f"/api/expand?id={node.id}")
        assert 1 < around["shown"] <= 150
    finally:
        server.stop()
