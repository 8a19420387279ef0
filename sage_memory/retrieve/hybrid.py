"""The hybrid retriever: dense and lexical seeds, graph expansion, fusion, context packing.

Cost is bounded by what a query touches: top-k seeds per channel, a capped 1-2 hop expansion
from the best nodes, and provenance lookups for the items kept, never a scan of the scope.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from sage_memory.config import RetrieveConfig
from sage_memory.embed.base import Embedder
from sage_memory.index.base import VectorIndex, collection_name
from sage_memory.retrieve.context import TokenCounter, default_counter, fact_line, memory_line, pack
from sage_memory.store.base import GraphStore
from sage_memory.types import Edge, EdgeHit, MemoryHit, Node, NodeHit, RetrievalResult, Scope

RRF_K = 60


def rrf(rankings: dict[str, Sequence[str]], weights: dict[str, float]) -> dict[str, float]:
    """Weighted reciprocal-rank fusion of several rankings of ids."""
    scores: dict[str, float] = defaultdict(float)
    for channel, ids in rankings.items():
        w = weights.get(channel, 1.0)
        for rank, item in enumerate(ids):
            scores[item] += w / (RRF_K + rank + 1)
    return scores


class Retriever:
    def __init__(
        self,
        store: GraphStore,
        index: VectorIndex,
        embedder: Embedder,
        config: RetrieveConfig,
        counter: TokenCounter | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.config = config
        self._counter = counter

    @property
    def count_tokens(self) -> TokenCounter:
        if self._counter is None:
            self._counter = default_counter()
        return self._counter

    def search(
        self,
        query: str,
        scope: Scope,
        *,
        limit: int,
        as_of: datetime | None,
        context_tokens: int,
        now: datetime,
    ) -> RetrievalResult:
        started = time.perf_counter()
        part = scope.partition
        k = max(self.config.seeds_per_channel, limit)
        qvec = self.embedder.embed_query(query)
        dense = self.index.query(collection_name(part.key, "memory"), qvec, k)
        lexical = self.store.search_text(scope, query, entity="memory", limit=k)
        node_dense = self.index.query(collection_name(part.key, "node"), qvec, 10)
        node_lex = self.store.search_text(part, query, entity="node", limit=10)
        node_scores = rrf(
            {
                "dense": [i for i, s in node_dense if s >= 0.35],
                "lexical": [i for i, _ in node_lex],
            },
            {"dense": 1.0, "lexical": 1.0},
        )
        seed_nodes = sorted(node_scores, key=lambda i: -node_scores[i])[:8]
        edges, nodes = self._expand(part, seed_nodes, node_scores, as_of)
        # Memories that support the best graph items are graph-channel hits.
        graph_mem: dict[str, float] = defaultdict(float)
        for n in nodes.values():
            for m in n.memory_ids[-5:]:
                graph_mem[m] += node_scores.get(n.id, 0.0)
        for e, s in edges.values():
            for m in e.memory_ids[-3:]:
                graph_mem[m] += s
        fused = rrf(
            {
                "dense": [i for i, _ in dense],
                "lexical": [i for i, _ in lexical],
                "graph": sorted(graph_mem, key=lambda i: -graph_mem[i])[:k],
            },
            {"dense": 1.0, "lexical": 1.0, "graph": 0.5},
        )
        channels: dict[str, list[str]] = defaultdict(list)
        for name, ids in (
            ("dense", [i for i, _ in dense]),
            ("lexical", [i for i, _ in lexical]),
            ("graph", list(graph_mem)),
        ):
            for i in ids:
                channels[i].append(name)
        ranked = sorted(fused, key=lambda i: -fused[i])
        memories = self.store.get_memories(scope, ranked[: limit * 2])
        by_id = {m.id: m for m in memories}
        memory_hits = [
            MemoryHit(
                by_id[i],
                fused[i],
                tuple(channels[i]),
                "found by " + " + ".join(channels[i]),
            )
            for i in ranked
            if i in by_id
        ][:limit]
        names = {n.id: n.name for n in nodes.values()}
        edge_hits = [
            EdgeHit(
                e,
                s,
                names.get(e.source_id, "?"),
                names.get(e.target_id, "?"),
                ("graph",),
                f"{names.get(e.source_id, '?')} -{e.relation}-> {names.get(e.target_id, '?')}",
            )
            for e, s in sorted(edges.values(), key=lambda es: -es[1])
        ][: limit * 2]
        node_hits = [
            NodeHit(n, node_scores.get(n.id, 0.0), ("graph",), "seed" if n.id in seed_nodes else "neighbour")
            for n in sorted(nodes.values(), key=lambda n: -node_scores.get(n.id, 0.0))
        ][:limit]
        current = [h for h in edge_hits if h.edge.is_current(as_of)]
        history = [h for h in edge_hits if not h.edge.is_current(as_of)]
        context = pack(
            [
                ("Facts", [fact_line(h) for h in current]),
                ("Memories", [memory_line(h) for h in memory_hits]),
                ("History", [fact_line(h) for h in history]),
            ],
            context_tokens,
            self.count_tokens,
        )
        return RetrievalResult(
            query=query,
            scope=scope,
            memories=tuple(memory_hits),
            nodes=tuple(node_hits),
            edges=tuple(edge_hits),
            context=context,
            took_ms=(time.perf_counter() - started) * 1000,
        )

    def _expand(
        self,
        part: Scope,
        seeds: list[str],
        scores: dict[str, float],
        as_of: datetime | None,
    ) -> tuple[dict[str, tuple[Edge, float]], dict[str, Node]]:
        edges: dict[str, tuple[Edge, float]] = {}
        touched = set(seeds)
        frontier = list(seeds)
        for hop in range(self.config.hops):
            if not frontier:
                break
            found = self.store.edges_of(part, frontier)[: self.config.max_fanout * len(frontier)]
            nxt = []
            for e in found:
                if e.confidence < self.config.min_confidence:
                    continue
                base = max(scores.get(e.source_id, 0.0), scores.get(e.target_id, 0.0))
                s = base * e.weight * e.confidence / (hop + 1)
                if as_of is None and not e.is_current():
                    s *= 0.3  # history ranks below current facts unless asked for a time
                elif as_of is not None and not e.is_current(as_of):
                    s *= 0.3
                if e.id not in edges or edges[e.id][1] < s:
                    edges[e.id] = (e, s)
                for nid in (e.source_id, e.target_id):
                    if nid not in touched:
                        touched.add(nid)
                        nxt.append(nid)
                        scores.setdefault(nid, s * 0.5)
            frontier = nxt[: self.config.max_fanout]
        nodes = {n.id: n for n in self.store.get_nodes(part, list(touched))}
        return edges, nodes
