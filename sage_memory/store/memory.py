"""InMemoryGraphStore: everything in process memory, the graph held in networkx.

For tests, notebooks and short-lived agents. Same contract as the SQLite store (the shared
contract suite in :mod:`sage_memory.testing.store_contract` runs against both).
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import networkx as nx
import numpy as np

from sage_memory.codec import from_dict
from sage_memory.store.base import Direction, TextEntity, name_key
from sage_memory.store.lexical import BM25Index
from sage_memory.types import (
    AccessEvent,
    Change,
    Edge,
    Memory,
    Node,
    Scope,
    Suggestion,
    SuggestionStatus,
    Vector,
)


class _Partition:
    """One scope partition: its memories, its graph and their lexical indexes."""

    def __init__(self) -> None:
        self.memories: dict[str, Memory] = {}
        self.graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        self.names: dict[str, set[str]] = defaultdict(set)
        self.memory_text = BM25Index()
        self.node_text = BM25Index()
        # Memories in (timestamp, created_at, insertion number) order, for adjacent_memories.
        self.order: list[tuple[datetime, datetime, int, str]] = []
        self.order_key: dict[str, tuple[datetime, datetime, int, str]] = {}


class InMemoryGraphStore:
    """A GraphStore kept in dicts and one networkx MultiDiGraph per partition."""

    persistent = False

    def __init__(self) -> None:
        self._parts: dict[str, _Partition] = {}
        self._where: dict[str, str] = {}  # record id -> partition key
        self._ends: dict[str, tuple[str, str]] = {}  # edge id -> (source, target)
        self._vectors: dict[str, Vector] = {}
        self._provenance: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self._journal: list[tuple[int, Change]] = []
        self._meta: dict[str, str] = {}
        # access log rows: (seq, event id, scope key, at, weight, entity, id, is context)
        self._access: list[tuple[int, str, str, datetime, float, str, str, bool]] = []
        self._access_next = 1
        self._suggestions: dict[str, Suggestion] = {}  # insertion order = queue order
        self._suggestion_keys: set[tuple[str, str]] = set()
        self._lock = threading.RLock()
        self._inserted = itertools.count()

    def _part(self, key: str) -> _Partition:
        if key not in self._parts:
            self._parts[key] = _Partition()
        return self._parts[key]

    # -- writes ----------------------------------------------------------------------------
    def apply(self, changes: Sequence[Change], vectors: Mapping[str, Vector] | None = None) -> None:
        vectors = vectors or {}
        with self._lock:
            for ch in changes:
                getattr(self, f"_write_{ch.entity}")(ch.entity_id, ch.after)
                if ch.entity_id in vectors:
                    self._vectors[ch.entity_id] = np.asarray(
                        vectors[ch.entity_id], dtype=np.float32
                    )
                if ch.after is None:
                    self._vectors.pop(ch.entity_id, None)
                seq = self._journal[-1][0] + 1 if self._journal else 1
                self._journal.append((seq, ch))

    def _write_memory(self, mid: str, after: Mapping[str, Any] | None) -> None:
        old_key = self._where.pop(mid, None)
        number = None
        if old_key is not None:
            part = self._parts[old_key]
            part.memories.pop(mid, None)
            part.memory_text.remove(mid)
            old_order = part.order_key.pop(mid)
            del part.order[bisect.bisect_left(part.order, old_order)]
            number = old_order[2]  # an update keeps its place among equal timestamps
        if after is None:
            return
        memory = from_dict(Memory, after)
        part = self._part(memory.scope.key)
        part.memories[mid] = memory
        part.memory_text.add(mid, memory.text)
        if number is None:
            number = next(self._inserted)
        order = (memory.timestamp, memory.created_at, number, mid)
        bisect.insort(part.order, order)
        part.order_key[mid] = order
        self._where[mid] = memory.scope.key

    def _unlink_provenance(self, entity_id: str) -> None:
        for links in self._provenance.values():
            links.discard(("node", entity_id))
            links.discard(("edge", entity_id))

    def _write_node(self, nid: str, after: Mapping[str, Any] | None) -> None:
        old_key = self._where.get(nid)
        if old_key is not None:
            part = self._parts[old_key]
            old: Node = part.graph.nodes[nid]["record"]
            for k in {name_key(old.name), *(name_key(a) for a in old.aliases)}:
                part.names[k].discard(nid)
            part.node_text.remove(nid)
            for m in old.memory_ids:
                self._provenance[m].discard(("node", nid))
            if after is None:
                # Edges are the caller's to delete (the engine deletes them first, journaled);
                # keep a bare endpoint while any remain so no edge is dropped silently.
                if part.graph.degree(nid):
                    del part.graph.nodes[nid]["record"]
                else:
                    part.graph.remove_node(nid)
                del self._where[nid]
                return
        if after is None:
            return
        node = from_dict(Node, after)
        part = self._part(node.scope.key)
        part.graph.add_node(nid, record=node)
        for k in {name_key(node.name), *(name_key(a) for a in node.aliases)}:
            if k:
                part.names[k].add(nid)
        part.node_text.add(nid, " ".join([node.name, *node.aliases, node.summary]))
        for m in node.memory_ids:
            self._provenance[m].add(("node", nid))
        self._where[nid] = node.scope.key

    def _write_edge(self, eid: str, after: Mapping[str, Any] | None) -> None:
        old_key = self._where.pop(eid, None)
        if old_key is not None:
            part = self._parts[old_key]
            u, v = self._ends.pop(eid)
            for m in part.graph.edges[u, v, eid]["record"].memory_ids:
                self._provenance[m].discard(("edge", eid))
            part.graph.remove_edge(u, v, key=eid)
            for end in (u, v):  # a bare endpoint left by a node deletion goes with its last edge
                bare = end in part.graph and "record" not in part.graph.nodes[end]
                if bare and not part.graph.degree(end):
                    part.graph.remove_node(end)
        if after is None:
            return
        edge = from_dict(Edge, after)
        part = self._part(edge.scope.key)
        # Endpoints may be written later in the same batch; add bare nodes, filled on write.
        part.graph.add_edge(edge.source_id, edge.target_id, key=eid, record=edge)
        self._ends[eid] = (edge.source_id, edge.target_id)
        for m in edge.memory_ids:
            self._provenance[m].add(("edge", eid))
        self._where[eid] = edge.scope.key

    # -- memories --------------------------------------------------------------------------
    def _memories(self, scope: Scope) -> list[Memory]:
        part = self._parts.get(scope.key)
        if part is None:
            return []
        run = scope.run_id if scope.partition.run_id is None else None
        return [m for m in part.memories.values() if run is None or m.scope.run_id == run]

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

    # -- graph -----------------------------------------------------------------------------
    def _graph(self, scope: Scope) -> nx.MultiDiGraph[str] | None:
        part = self._parts.get(scope.key)
        return None if part is None else part.graph

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
                    for _, _, k, d in view:
                        edge = d["record"]
                        if wanted is None or edge.relation in wanted:
                            found.setdefault(k, edge)
        return list(found.values())

    def derived_from(self, scope: Scope, memory_id: str) -> tuple[list[Node], list[Edge]]:
        links = self._provenance.get(memory_id, set())
        nodes = self.get_nodes(scope, [i for kind, i in links if kind == "node"])
        edges = self.get_edges(scope, [i for kind, i in links if kind == "edge"])
        return nodes, edges

    def memory_nodes(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        part = self._parts.get(scope.partition.key)
        if part is None:
            return {}
        out: dict[str, list[str]] = {}
        with self._lock:
            for mid in memory_ids:
                ids = [i for kind, i in self._provenance.get(mid, ()) if kind == "node"]
                ids = sorted(i for i in ids if i in part.graph and "record" in part.graph.nodes[i])
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
    def _walk(part: _Partition, memory: Memory, positions: range) -> str | None:
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

    # -- journal, scopes, metadata ---------------------------------------------------------
    def journal(
        self,
        *,
        scope: Scope | None = None,
        entity_id: str | None = None,
        batch_id: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, Change]]:
        out = [
            (seq, ch)
            for seq, ch in self._journal
            if seq > after_seq
            and (scope is None or ch.scope_key == scope.key)
            and (entity_id is None or ch.entity_id == entity_id)
            and (batch_id is None or ch.batch_id == batch_id)
        ]
        return out if limit is None else out[:limit]

    def purge_journal(self, entity_ids: Sequence[str]) -> int:
        drop = set(entity_ids)
        with self._lock:
            before = len(self._journal)
            self._journal = [(s, c) for s, c in self._journal if c.entity_id not in drop]
            return before - len(self._journal)

    def partitions(self) -> list[Scope]:
        out = []
        for part in self._parts.values():
            records: list[Any] = list(part.memories.values())
            records += [d["record"] for _, d in part.graph.nodes(data=True) if "record" in d]
            if records:
                out.append(records[0].scope.partition)
        return out

    def get_meta(self, key: str) -> str | None:
        return self._meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self._meta[key] = value

    # -- the evolver's state: access log and review queue ---------------------------------
    def log_access(self, events: Sequence[AccessEvent]) -> None:
        with self._lock:
            for ev in events:
                key = ev.scope.partition.key
                items = [("node", i, False) for i in dict.fromkeys(ev.node_ids)]
                items += [("memory", i, False) for i in dict.fromkeys(ev.memory_ids)]
                items += [("node", i, True) for i in dict.fromkeys(ev.context_ids)]
                for entity, eid, context in items:
                    row = (self._access_next, ev.id, key, ev.at, ev.weight, entity, eid, context)
                    self._access.append(row)
                    self._access_next += 1

    def access_seq(self) -> int:
        return self._access[-1][0] if self._access else 0

    def _window(
        self, scope: Scope, after_seq: int, until_seq: int | None
    ) -> list[tuple[int, str, str, datetime, float, str, str, bool]]:
        key, until = scope.partition.key, until_seq or 2**62
        with self._lock:
            return [r for r in self._access if after_seq < r[0] <= until and r[2] == key]

    def co_access(
        self,
        scope: Scope,
        *,
        after_seq: int = 0,
        until_seq: int | None = None,
        node_ids: Sequence[str] | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> list[tuple[str, str, float, int]]:
        allowed = None if node_ids is None else set(node_ids)
        events: dict[str, list[tuple[str, bool, float]]] = defaultdict(list)
        for r in self._window(scope, after_seq, until_seq):
            if since is not None and r[3] < since:
                continue
            if r[5] == "node" and (allowed is None or r[6] in allowed):
                events[r[1]].append((r[6], r[7], r[4]))
        weights: dict[tuple[str, str], float] = defaultdict(float)
        counts: dict[tuple[str, str], set[str]] = defaultdict(set)
        for event_id, rows in events.items():
            for (a, a_ctx, w), (b, b_ctx, _) in itertools.permutations(rows, 2):
                if a < b and not (a_ctx and b_ctx):
                    weights[a, b] += w
                    counts[a, b].add(event_id)
        out = [(a, b, w, len(counts[a, b])) for (a, b), w in weights.items()]
        out.sort(key=lambda t: (-t[2], t[0], t[1]))
        return out if limit is None else out[:limit]

    def accessed(
        self, scope: Scope, *, after_seq: int = 0, until_seq: int | None = None
    ) -> dict[str, tuple[int, datetime]]:
        out: dict[str, tuple[int, datetime]] = {}
        for r in self._window(scope, after_seq, until_seq):
            if not r[7] and r[4] > 0:
                n, last = out.get(r[6], (0, r[3]))
                out[r[6]] = (n + 1, max(last, r[3]))
        return out

    def prune_access(self, before: datetime) -> int:
        with self._lock:
            n = len(self._access)
            self._access = [r for r in self._access if r[3] >= before]
            return n - len(self._access)

    def purge_evolver_state(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> int:
        key = scope.partition.key
        gone = None if entity_ids is None else set(entity_ids)
        with self._lock:
            n = len(self._access)
            self._access = [
                r for r in self._access if r[2] != key or (gone is not None and r[6] not in gone)
            ]
            n -= len(self._access)
            for sid, item in list(self._suggestions.items()):
                if item.scope.partition.key != key:
                    continue
                if gone is None or any(i in repr(item) for i in gone):
                    del self._suggestions[sid]
                    self._suggestion_keys.discard((key, item.key))
                    n += 1
            if gone is None:
                for name in [k for k in self._meta if k.endswith(key) and k != key]:
                    del self._meta[name]
                    n += 1
            return n

    def put_suggestions(self, items: Sequence[Suggestion]) -> list[Suggestion]:
        queued = []
        with self._lock:
            for item in items:
                k = (item.scope.partition.key, item.key)
                if k in self._suggestion_keys or item.id in self._suggestions:
                    continue
                self._suggestion_keys.add(k)
                self._suggestions[item.id] = item
                queued.append(item)
        return queued

    def list_suggestions(
        self,
        scope: Scope | None = None,
        *,
        status: str | None = "open",
        ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Suggestion]:
        wanted = None if ids is None else set(ids)
        out = [
            s
            for s in self._suggestions.values()
            if (scope is None or s.scope.partition.key == scope.partition.key)
            and (status is None or s.status == status)
            and (wanted is None or s.id in wanted)
        ]
        return out if limit is None else out[:limit]

    def set_suggestion_status(
        self,
        ids: Sequence[str],
        status: SuggestionStatus,
        at: datetime,
        batch_id: str | None = None,
    ) -> None:
        import dataclasses

        with self._lock:
            for sid in ids:
                if sid in self._suggestions:
                    self._suggestions[sid] = dataclasses.replace(
                        self._suggestions[sid], status=status, updated_at=at, batch_id=batch_id
                    )

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

    def close(self) -> None:
        """Nothing to release; the data goes with the object."""
