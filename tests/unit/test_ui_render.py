"""Layout and SVG rendering: pure functions over plain graph views."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from sage_memory import SageMemory
from sage_memory.types import EdgeSpec, NodeSpec
from sage_memory.ui import render_svg, subgraph_html
from sage_memory.ui.layout import GraphView, ViewEdge, ViewNode, positions, sample
from sage_memory.ui.plot import sparkline
from sage_memory.ui.svg import edge_width, label_colour, render_view

SVG = "{http://www.w3.org/2000/svg}"


def chain(n: int) -> GraphView:
    nodes = tuple(ViewNode(f"n{i}", f"node {i}", "Task" if i % 2 else "Tool") for i in range(n))
    edges = tuple(
        ViewEdge(f"e{i}", f"n{i}", f"n{i + 1}", "PRECEDES", confidence=i / max(1, n))
        for i in range(n - 1)
    )
    return GraphView(nodes, edges, total_nodes=n)


def groups(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{SVG}g") if cls in (g.get("class") or "").split()]


def test_positions_are_deterministic_and_inside_the_unit_square() -> None:
    view = chain(12)
    a, b = positions(view.nodes, view.edges), positions(view.nodes, view.edges)
    assert a == b and set(a) == {n.id for n in view.nodes}
    assert all(0.0 <= x <= 1.0 and 0.0 <= y <= 1.0 for x, y in a.values())
    assert positions(view.nodes[:1], ()) == {"n0": (0.5, 0.5)}
    assert positions((), ()) == {}


def test_svg_is_well_formed_with_a_group_per_node_and_edge() -> None:
    svg = render_view(chain(6))
    assert len(groups(svg, "node")) == 6 and len(groups(svg, "edge")) == 5
    ids = {g.get("data-id") for g in groups(svg, "node")}
    assert ids == {f"n{i}" for i in range(6)}
    assert "<script" not in svg and "http://" not in svg.replace("http://www.w3.org/2000/svg", "")


def test_expired_is_dashed_confidence_is_width_and_the_path_is_highlighted() -> None:
    nodes = (ViewNode("a", "Alice", "Person"), ViewNode("b", "Paris", "Place"))
    edges = (
        ViewEdge("old", "a", "b", "LIVES_IN", confidence=0.2, expired=True),
        ViewEdge("new", "b", "a", "KNOWS", confidence=1.0, on_path=True),
    )
    svg = render_view(GraphView(nodes, edges, 2))
    (old,) = [g for g in groups(svg, "edge") if g.get("data-id") == "old"]
    (new,) = [g for g in groups(svg, "edge") if g.get("data-id") == "new"]
    assert "expired" in old.get("class", "") and "on-path" not in old.get("class", "")
    assert "on-path" in new.get("class", "")
    w_old = float(old.find(f"{SVG}line").get("stroke-width"))  # type: ignore[union-attr]
    w_new = float(new.find(f"{SVG}line").get("stroke-width"))  # type: ignore[union-attr]
    assert w_old == edge_width(0.2) < w_new
    assert ".edge.expired line{stroke-dasharray" in svg


def test_labels_keep_their_colour_and_names_are_escaped() -> None:
    assert label_colour("Task") == label_colour("Task")
    nodes = (ViewNode("x", "<script>alert(1)</script> & co", "Tool"),)
    svg = render_view(GraphView(nodes, (), 1))
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    ET.fromstring(svg)  # still well-formed


def test_sample_keeps_starts_and_hubs_and_pages_through_the_rest() -> None:
    hub = ViewNode("hub", "hub", "Entity")
    leaves = tuple(ViewNode(f"l{i}", f"leaf {i:03}", "Entity") for i in range(300))
    start = ViewNode("s", "zzz start", "Entity", start=True)
    edges = tuple(ViewEdge(f"e{i}", "hub", f"l{i}", "HAS") for i in range(300))
    view = GraphView((*leaves, hub, start), edges, 302)
    first = sample(view, limit=50)
    assert [n.id for n in first.nodes[:2]] == ["s", "hub"]
    assert len(first.nodes) == 50 and first.total_nodes == 302 and first.offset == 0
    assert all(e.source in {n.id for n in first.nodes} for e in first.edges)
    second = sample(view, limit=50, offset=50)
    assert not {n.id for n in first.nodes} & {n.id for n in second.nodes}
    assert "nodes 51-100 of 302" in render_view(second)


def test_render_svg_and_html_from_a_real_subgraph() -> None:
    with SageMemory(embedder="hashing") as mem:
        day = datetime(2026, 3, 1, tzinfo=UTC)
        mem.add_graph(
            "Alice lives in Paris.",
            nodes=[NodeSpec("a", "Alice", "Person"), NodeSpec("p", "Paris", "Place")],
            edges=[EdgeSpec("a", "p", "LIVES_IN", valid_from=day, valid_to=day.replace(month=6))],
            user_id="alice",
        )
        sub = mem.explore("Alice", user_id="alice", include_expired=True)
    svg = render_svg(sub)
    (edge,) = groups(svg, "edge")
    assert "expired" in edge.get("class", "") and edge.get("data-relation") == "LIVES_IN"
    (start,) = groups(svg, "start")
    assert start.find(f"{SVG}title").text == "Alice (Person)"  # type: ignore[union-attr]
    html = subgraph_html(sub, title="Alice")
    assert html.startswith("<!doctype html>") and "<svg" in html and "2026-06-01" in html


def test_sparkline_plots_one_point_per_run() -> None:
    assert 'data-points="0"' in sparkline("nodes", [])
    svg = sparkline("nodes", [3, 5, 4])
    root = ET.fromstring(svg)
    assert len(list(root.iter(f"{SVG}circle"))) == 3 and root.find(f"{SVG}polyline") is not None
