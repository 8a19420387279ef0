"""Where to draw each node: a networkx layout over a bounded, plain-data graph view.

The view is built from engine types at the boundary (``GraphView.from_subgraph``) so the layout
and the SVG writer are pure functions of plain data, testable without a store. Big graphs are
cut down before layout (``sample``): a spring layout is quadratic-ish, so a 10k-node scope is
never laid out whole; the page shows the best-connected part and pages through the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: the most nodes one picture lays out; more are paged (spring layout cost grows fast)
MAX_DRAWN_NODES = 150


@dataclass(frozen=True)
class ViewNode:
    id: str
    name: str
    label: str
    confidence: float = 1.0
    start: bool = False  # the node a picture is centred on (explore start, search seeds)


@dataclass(frozen=True)
class ViewEdge:
    id: str
    source: str
    target: str
    relation: str
    fact: str = ""
    confidence: float = 1.0
    expired: bool = False  # no longer holds (valid_to or expired_at set): drawn dashed
    on_path: bool = False  # part of the path that linked a graph hit to the query


@dataclass(frozen=True)
class GraphView:
    """A drawable graph: nodes, edges, and how much of the whole it shows."""

    nodes: tuple[ViewNode, ...] = ()
    edges: tuple[ViewEdge, ...] = ()
    total_nodes: int = 0  # in the graph the view was cut from
    offset: int = 0  # index of the first shown node in the ranked whole
    extra: Mapping[str, Any] = field(default_factory=dict)

    @staticmethod
    def from_subgraph(
        sub: Any,
        *,
        path_edge_ids: Iterable[str] = (),
        start_ids: Iterable[str] | None = None,
        at: datetime | None = None,
    ) -> GraphView:
        """From a :class:`sage_memory.types.Subgraph` (or anything with .nodes/.edges/.start).

        ``at``: judge expiry at that moment (default: whether the fact is current now).
        """
        on_path = set(path_edge_ids)
        starts = set(sub.start if start_ids is None else start_ids)
        nodes = tuple(
            ViewNode(n.id, n.name, n.label, float(n.confidence), n.id in starts) for n in sub.nodes
        )
        edges = tuple(
            ViewEdge(
                e.id,
                e.source_id,
                e.target_id,
                e.relation,
                e.fact,
                float(e.confidence),
                expired=_expired(e, at),
                on_path=e.id in on_path,
            )
            for e in sub.edges
        )
        return GraphView(nodes, edges, total_nodes=len(nodes))


def _expired(edge: Any, at: datetime | None) -> bool:
    if at is None:
        return not edge.is_current()
    if edge.expired_at is not None and edge.expired_at <= at:
        return True
    return edge.valid_to is not None and edge.valid_to <= at


def sample(view: GraphView, *, limit: int = MAX_DRAWN_NODES, offset: int = 0) -> GraphView:
    """At most ``limit`` nodes, starting at ``offset`` in a stable ranking: start nodes first,
    then by degree (the hubs say most about a graph), then by name. Keeps the edges whose both
    ends are shown."""
    if len(view.nodes) <= limit and offset == 0:
        return GraphView(view.nodes, view.edges, len(view.nodes), 0, view.extra)
    degree: dict[str, int] = {}
    for e in view.edges:
        degree[e.source] = degree.get(e.source, 0) + 1
        degree[e.target] = degree.get(e.target, 0) + 1
    ranked = sorted(view.nodes, key=lambda n: (not n.start, -degree.get(n.id, 0), n.name, n.id))
    offset = max(0, min(offset, max(0, len(ranked) - 1)))
    kept = ranked[offset : offset + limit]
    ids = {n.id for n in kept}
    edges = tuple(e for e in view.edges if e.source in ids and e.target in ids)
    return GraphView(tuple(kept), edges, len(view.nodes), offset, view.extra)


def positions(
    nodes: Sequence[ViewNode], edges: Sequence[ViewEdge], *, seed: int = 7
) -> dict[str, tuple[float, float]]:
    """Node centres in [0, 1] x [0, 1], deterministic for a given graph (fixed seed)."""
    import networkx as nx

    if not nodes:
        return {}
    if len(nodes) == 1:
        return {nodes[0].id: (0.5, 0.5)}
    g = nx.Graph()
    g.add_nodes_from(n.id for n in nodes)
    g.add_edges_from((e.source, e.target) for e in edges if e.source != e.target)
    k = 1.6 / max(1.0, len(nodes) ** 0.5)  # spread: more room per node in small graphs
    raw = nx.spring_layout(g, k=k, iterations=60 if len(nodes) <= 60 else 35, seed=seed)
    xs = [float(p[0]) for p in raw.values()]
    ys = [float(p[1]) for p in raw.values()]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    sx, sy = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    return {str(nid): ((float(p[0]) - x0) / sx, (float(p[1]) - y0) / sy) for nid, p in raw.items()}
