"""Reading memories, the graph, words and vectors from the in-memory store."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sage_memory.store.base import NODE_LINKS, Direction, TextEntity, name_key
from sage_memory.store.memory_data import InMemoryData, Partition
from sage_memory.types import Edge, Memory, Node, Scope, Vector


class InMemoryReads(InMemoryData):
    """Every read of the GraphStore port, over the partitions' dicts and graphs."""

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        by_id = {m.id: m for m in self._memories(scope)}
        return [by_id[i] for i in ids if i in by_id]

    def find_memory(self, memory_id: str) -> Memory | None:
        key = self._where.get(memory_id)
        return None if key is None else self._parts[key].memories.get(memory_id)

    def list_memories(
        self,
        scope: Scope,
        *,
        limit: int | None = None,
        offset: int = 0,
        include_archived: bool = False,
        before: datetime | None = None,
    ) -> list[Memory]:
        with self._lock:
            items = [
                m
                for m in self._memories(scope)
                if (include_archived or not m.archived) and (before is None or m.timestamp < before)
            ]
        items.sort(key=lambda m: (m.timestamp, m.created_at))  # stable: insertion order
        end = None if limit is None else offset + limit
        return items[offset:end]

    def count_memories(self, scope: Scope) -> int:
        return len(self._memories(scope))

    def get_nodes(self, scope: Scope, ids: Sequence[str]) -> list[Node]:
        g = self._graph(scope)
        if g is None:
            return []
        return [
            g.nodes[i]["record"] for i in dict.fromkeys(ids) if i in g and "record" in g.nodes[i]
        ]

    def get_edges(self, scope: Scope, ids: Sequence[str]) -> list[Edge]:
        g = self._graph(scope)
        if g is None:
            return []
        out = []
        for eid in dict.fromkeys(ids):
            ends = self._ends.get(eid)
            if ends is not None and self._where.get(eid) == scope.key:
                out.append(g.edges[ends[0], ends[1], eid]["record"])
        return out

    def find_nodes(self, scope: Scope, names: Sequence[str]) -> list[Node]:
        part = self._parts.get(scope.key)
        if part is None:
            return []
        ids = [nid for n in names for nid in sorted(part.names.get(name_key(n), ()))]
        return self.get_nodes(scope, ids)

    def list_nodes(self, scope: Scope, *, limit: int | None = None, offset: int = 0) -> list[Node]:
        g = self._graph(scope)
        nodes = [] if g is None else [d["record"] for _, d in g.nodes(data=True) if "record" in d]
        nodes.sort(key=lambda n: n.id)  # the SQLite store's order, independent of insertion
        return nodes[offset : None if limit is None else offset + limit]

    def list_edges(self, scope: Scope, *, limit: int | None = None, offset: int = 0) -> list[Edge]:
        g = self._graph(scope)
        edges = [] if g is None else [d["record"] for _, _, d in g.edges(data=True)]
        edges.sort(key=lambda e: e.id)
        return edges[offset : None if limit is None else offset + limit]

    def count_graph(self, scope: Scope) -> tuple[int, int]:
        g = self._graph(scope)
        if g is None:
            return (0, 0)
        return sum(1 for _, d in g.nodes(data=True) if "record" in d), g.number_of_edges()

    def edges_of(
        self,
        scope: Scope,
        node_ids: Sequence[str],
        *,
        direction: Direction = "both",
        relations: Sequence[str] | None = None,
        per_node: int | None = None,
    ) -> list[Edge]:
        g = self._graph(scope)
        if g is None:
            return []
        wanted = set(relations) if relations else None
        found: dict[str, Edge] = {}
        with self._lock:
            for nid in node_ids:
                if nid not in g:
                    continue
                views = []
                if direction in ("out", "both"):
                    views.append(g.out_edges(nid, keys=True, data=True))
                if direction in ("in", "both"):
                    views.append(g.in_edges(nid, keys=True, data=True))
                for view in views:
                    # A node's edges are listed in the order they were added.
                    kept = [
                        (k, d["record"])
                        for _, _, k, d in view
                        if wanted is None or d["record"].relation in wanted
                    ]
                    if per_node is not None:
                        kept = kept[max(0, len(kept) - per_node) :]
                    for k, edge in kept:
                        found.setdefault(k, edge)
        return list(found.values())

    def derived_from(self, scope: Scope, memory_id: str) -> tuple[list[Node], list[Edge]]:
        links = self._provenance.get(memory_id, set())
        nodes = self.get_nodes(scope, sorted({i for kind, i in links if kind in NODE_LINKS}))
        edges = self.get_edges(scope, [i for kind, i in links if kind == "edge"])
        return nodes, edges

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        part = self._parts.get(scope.partition.key)
        if part is None:
            return {}
        g = part.graph
        out: dict[str, list[str]] = {}
        with self._lock:
            for mid in memory_ids:
                ids = [i for kind, i in self._provenance.get(mid, ()) if kind == "node"]
                ids = sorted(i for i in ids if i in g and "record" in g.nodes[i])
                if ids:
                    out[mid] = ids
        return out

    def adjacent_memories(
        self, scope: Scope, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        part = self._parts.get(scope.key)
        if part is None:
            return {}
        run = scope.run_id if scope.partition.run_id is None else None
        out: dict[str, tuple[str | None, str | None]] = {}
        with self._lock:
            for mid in memory_ids:
                memory = part.memories.get(mid)
                if memory is None or (run is not None and memory.scope.run_id != run):
                    continue
                at = bisect.bisect_left(part.order, part.order_key[mid])
                out[mid] = (
                    self._walk(part, memory, range(at - 1, -1, -1)),
                    self._walk(part, memory, range(at + 1, len(part.order))),
                )
        return out

    @staticmethod
    def _walk(part: Partition, memory: Memory, positions: range) -> str | None:
        for i in positions:
            other = part.memories[part.order[i][3]]
            if other.scope.run_id == memory.scope.run_id and not other.archived:
                return other.id
        return None

    # -- lexical and vectors ---------------------------------------------------------------
    def search_text(
        self, scope: Scope, query: str, *, entity: TextEntity = "memory", limit: int = 20
    ) -> list[tuple[str, float]]:
        part = self._parts.get(scope.key)
        if part is None:
            return []
        if entity == "node":
            return part.node_text.search(query, limit)
        allowed = {m.id for m in self._memories(scope)} if scope.run_id else None
        hits = part.memory_text.search(query, limit if allowed is None else limit * 10)
        if allowed is not None:
            hits = [h for h in hits if h[0] in allowed]
        return hits[:limit]

    def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        return {i: self._vectors[i] for i in ids if i in self._vectors}

    def vector_ids(self, scope: Scope, entity: TextEntity) -> set[str]:
        part = self._parts.get(scope.key)
        if part is None:
            return set()
        ids = part.memories.keys() if entity == "memory" else part.graph.nodes
        return {i for i in ids if i in self._vectors}

    def graph_metrics(self, scope: Scope) -> dict[str, Any]:
        g = self._graph(scope.partition)
        nodes, edges = self.count_graph(scope.partition)
        relations: dict[str, int] = defaultdict(int)
        confidence = 0.0
        isolated = 0
        if g is not None:
            for _, _, d in g.edges(data=True):
                e: Edge = d["record"]
                if e.expired_at is None and e.valid_to is None:
                    relations[e.relation] += 1
                    confidence += e.confidence
            isolated = sum(1 for n, d in g.nodes(data=True) if "record" in d and not g.degree(n))
        return {
            "nodes": nodes,
            "edges": edges,
            "current_edges": sum(relations.values()),
            "isolated_nodes": isolated,
            "confidence_sum": confidence,
            "relations": dict(relations),
        }
