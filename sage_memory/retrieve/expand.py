"""Graph expansion from seed nodes: bounded BFS and local (push) personalized PageRank.

Both read the graph through a :class:`Neighbourhood`, which fetches a node's edges from the
store the first time it is needed (the latest :data:`EDGES_READ` of each end, bounded in the
store query itself), filters them (relations, confidence, time) and keeps at most
``max_fanout`` of them per node. A query therefore touches its seeds and a bounded ring around
them, never the whole graph: the cost depends on the neighbourhood, not on the graph's size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sage_memory.retrieve.reader import GraphReader
from sage_memory.types import Edge, Node, Scope

#: Weight factor of an edge that no longer holds (at the reference time) in PageRank.
EXPIRED_FACTOR = 0.3
#: Edges read per node and end (at least the fan-out): the store returns a busy node's latest
#: edges only, and the strongest current of those are kept. Below this many edges on an end
#: nothing changes; above it the oldest facts, mostly expired ones, are not read at all.
EDGES_READ = 200


@dataclass(frozen=True, slots=True)
class EdgeFilter:
    """Which edges an expansion may walk.

    Attributes:
        relations: allowed relation types (None = all).
        min_confidence: edges below it are ignored.
        start, end: a world-time window; edges whose validity does not meet it are ignored.
        at: the reference time (``as_of``); facts that only start after it are ignored.
        include_expired: walk edges that no longer hold at ``at`` (or now).
    """

    relations: frozenset[str] | None = None
    min_confidence: float = 0.0
    start: datetime | None = None
    end: datetime | None = None
    at: datetime | None = None
    include_expired: bool = True

    def allows(self, e: Edge) -> bool:
        if self.relations is not None and e.relation not in self.relations:
            return False
        if e.confidence < self.min_confidence:
            return False
        if self.at is not None and e.valid_from is not None and e.valid_from > self.at:
            return False
        if self.start is not None and e.valid_to is not None and e.valid_to <= self.start:
            return False
        if self.end is not None and e.valid_from is not None and e.valid_from >= self.end:
            return False
        return self.include_expired or e.is_current(self.at)


class Neighbourhood:
    """Capped, filtered adjacency read lazily from a store and cached for one query.

    Before a node's edges are read its record is: a hub (a node more than ``max_memories``
    memories support, such as a speaker or "the user") is reached but never expanded, because
    its edges are many, costly to read and say little about any one query.
    """

    def __init__(
        self,
        store: GraphReader,
        scope: Scope,
        edge_filter: EdgeFilter | None = None,
        *,
        max_fanout: int = 50,
        max_memories: int = 50,
    ) -> None:
        self.store = store
        self.scope = scope
        self.filter = edge_filter or EdgeFilter()
        self.max_fanout = max_fanout
        self.max_memories = max_memories
        self._adj: dict[str, list[tuple[str, float, Edge]]] = {}
        # Nodes whose edge read stopped short of its bound: all their edges were read, so their
        # links do not depend on which nodes were read with them.
        self._whole: set[str] = set()
        self.nodes: dict[str, Node] = {}
        self.edges: dict[str, Edge] = {}

    @property
    def touched(self) -> int:
        """How many nodes' edges were read: the work this query did on the graph."""
        return len(self._adj)

    def current(self, e: Edge) -> bool:
        return e.is_current(self.filter.at)

    def _standing(self, e: Edge) -> tuple[bool, float]:
        """(whether the fact no longer holds, its walk weight): one validity check for both."""
        w = max(e.weight, 0.0) * max(e.confidence, 0.0)
        return (False, w) if self.current(e) else (True, w * EXPIRED_FACTOR)

    def add_nodes(self, nodes: Iterable[Node]) -> None:
        """Records already at hand (the linked nodes): no need to read them again."""
        for n in nodes:
            self.nodes.setdefault(n.id, n)

    def is_hub(self, node_id: str) -> bool:
        node = self.nodes.get(node_id)
        return node is not None and len(node.memory_ids) > self.max_memories

    def fetch(self, node_ids: Iterable[str]) -> None:
        """Read the records and then the edges of the nodes not read yet (two store calls)."""
        missing = [n for n in dict.fromkeys(node_ids) if n not in self._adj]
        if not missing:
            return
        unknown = [n for n in missing if n not in self.nodes]
        if unknown:
            self.add_nodes(self.store.get_nodes(self.scope, unknown))
        walk = [n for n in missing if n in self.nodes and not self.is_hub(n)]
        found: dict[str, list[Edge]] = {n: [] for n in missing}
        if walk:
            relations = sorted(self.filter.relations) if self.filter.relations else None
            bound = max(EDGES_READ, self.max_fanout)
            found_edges = self.store.edges_of(self.scope, walk, relations=relations, per_node=bound)
            listed = dict.fromkeys(walk, 0)
            for e in found_edges:
                for end in (e.source_id, e.target_id):
                    if end in listed:
                        listed[end] += 1
                if not self.filter.allows(e):
                    continue
                for end in (e.source_id, e.target_id):
                    if end in found:
                        found[end].append(e)
            # Fewer edges listed at a node than one end's bound: no end of it was cut.
            self._whole.update(n for n, count in listed.items() if count < bound)
        # Each edge's standing once (an edge between two fetched nodes is listed twice).
        strength: dict[str, tuple[bool, float]] = {}
        for edges in found.values():
            for e in edges:
                if e.id not in strength:
                    strength[e.id] = self._standing(e)
        for nid, edges in found.items():
            # Strongest current facts first, so a busy node keeps its best edges under the cap.
            # Ties by the fact's words, not the (random) id: the same facts keep the same
            # edges under the cap on every ingest of the same text.
            edges.sort(key=lambda e: (strength[e.id][0], -strength[e.id][1], e.fact, e.relation))
            kept = edges[: self.max_fanout]
            self._adj[nid] = [
                (e.target_id if e.source_id == nid else e.source_id, strength[e.id][1], e)
                for e in kept
            ]
            for e in kept:
                self.edges.setdefault(e.id, e)

    def of(self, node_id: str) -> list[Edge]:
        self.fetch([node_id])
        return [e for _, _, e in self._adj[node_id]]

    def whole(self, node_id: str) -> bool:
        """Whether every edge of a node already read was read (none cut by the bound)."""
        return node_id in self._whole

    def links(self, node_id: str) -> list[tuple[str, float, Edge]]:
        """(neighbour, walk weight, edge) of a node already read, else none (reads nothing)."""
        return self._adj.get(node_id, [])


@dataclass(frozen=True, slots=True)
class Reach:
    """How BFS first reached a node: its hop count, the edge and the node it came through."""

    hops: int
    via: str | None = None
    parent: str | None = None


@dataclass(slots=True)
class Expansion:
    """The result of a BFS: reached nodes and the edges walked."""

    reach: dict[str, Reach] = field(default_factory=dict)
    edges: dict[str, Edge] = field(default_factory=dict)

    def path(self, node_id: str) -> list[Edge]:
        """The edges from a seed to ``node_id`` along the BFS tree (empty for a seed)."""
        return [e for _, e in self.steps(node_id)]

    def steps(self, node_id: str) -> list[tuple[str, Edge]]:
        """(node walked from, edge) pairs from a seed to ``node_id``: edges are walked in
        either direction, so the node says which way each was taken."""
        out: list[tuple[str, Edge]] = []
        at = self.reach.get(node_id)
        while at is not None and at.via is not None and at.parent is not None:
            out.append((at.parent, self.edges[at.via]))
            at = self.reach.get(at.parent)
        return out[::-1]


def bfs(
    hood: Neighbourhood,
    seeds: Sequence[str],
    *,
    max_hops: int = 2,
    max_nodes: int = 200,
) -> Expansion:
    """Breadth-first expansion from ``seeds``, at most ``max_hops`` out and ``max_nodes`` big."""
    out = Expansion(reach={s: Reach(0) for s in dict.fromkeys(seeds)})
    frontier = list(out.reach)
    for hop in range(1, max_hops + 1):
        if not frontier or len(out.reach) >= max_nodes:
            break
        hood.fetch(frontier)
        nxt: list[str] = []
        for nid in frontier:
            for e in hood.of(nid):
                out.edges.setdefault(e.id, e)
                other = e.target_id if e.source_id == nid else e.source_id
                if other not in out.reach and len(out.reach) < max_nodes:
                    out.reach[other] = Reach(hop, e.id, nid)
                    nxt.append(other)
        frontier = nxt
    return out


def local_ppr(
    hood: Neighbourhood,
    seeds: Mapping[str, float],
    *,
    alpha: float = 0.15,
    eps: float = 1e-3,
    max_pushes: int = 400,
    max_nodes: int = 100,
) -> dict[str, float]:
    """Personalized PageRank by local push (Andersen, Chung and Lang, 2006).

    Mass starts on the seeds (in proportion to their scores); a node whose residual is at least
    ``eps`` times its degree keeps ``alpha`` of it and pushes the rest to its neighbours in
    proportion to edge weight (weight x confidence, expired facts damped). Edges are walked in
    both directions. Work is bounded by about 1 / (alpha * eps) pushes, ``max_pushes`` and
    ``max_nodes`` whose edges are read: independent of the graph's size. Nodes past that
    budget (and hubs) keep the mass that reaches them.

    Returns:
        Approximate PageRank mass per reached node (sums to at most 1).
    """
    total = sum(v for v in seeds.values() if v > 0)
    if total <= 0:
        return {}
    residual: dict[str, float] = {s: v / total for s, v in seeds.items() if v > 0}
    mass: dict[str, float] = {}
    queue = list(residual)
    queued = set(queue)
    pushes = 0
    while queue and pushes < max_pushes:
        batch, queue = queue[:32], queue[32:]
        queued.difference_update(batch)
        room = max_nodes - hood.touched
        if room > 0:
            hood.fetch(batch[:room])
        for u in batch:
            ru = residual.get(u, 0.0)
            links = hood.links(u)
            if ru < eps * max(1, len(links)):
                continue
            pushes += 1
            residual[u] = 0.0
            spread = sum(w for _, w, _ in links)
            if spread <= 0:
                mass[u] = mass.get(u, 0.0) + ru  # a dead end (or a hub) keeps what reaches it
                continue
            mass[u] = mass.get(u, 0.0) + alpha * ru
            share = (1.0 - alpha) * ru / spread
            for v, w, _ in links:
                rv = residual.get(v, 0.0) + share * w
                residual[v] = rv
                if v not in queued and rv >= eps:
                    queue.append(v)
                    queued.add(v)
    return mass
