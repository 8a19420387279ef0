"""InMemoryGraphStore: everything in process memory, the graph held in networkx.

For tests, notebooks and short-lived agents. Same contract as the SQLite store (the shared
contract suites in :mod:`sage_memory.testing` run against both). Reads are in
``memory_reads``, the evolver's state in ``memory_evolver``; writes and the journal are here.
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sage_memory.codec import from_dict
from sage_memory.store.base import PROVENANCE_MENTION, PROVENANCE_NODE, name_key
from sage_memory.store.memory_data import Partition
from sage_memory.store.memory_evolver import InMemoryEvolverState
from sage_memory.store.memory_reads import InMemoryReads
from sage_memory.store.rows import text_searchable
from sage_memory.types import Change, Edge, Memory, Node, Scope, Vector


class InMemoryGraphStore(InMemoryReads, InMemoryEvolverState):
    """A GraphStore kept in dicts and one networkx MultiDiGraph per partition."""

    persistent = False

    def __init__(self) -> None:
        super().__init__()  # the evolver's state, the meta dict and the lock
        self._parts: dict[str, Partition] = {}
        self._where: dict[str, str] = {}  # record id -> partition key
        self._ends: dict[str, tuple[str, str]] = {}  # edge id -> (source, target)
        self._vectors: dict[str, Vector] = {}
        self._provenance: defaultdict[str, set[tuple[str, str]]] = defaultdict(set)
        self._journal: list[tuple[int, Change]] = []
        self._inserted = itertools.count()

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
                self._provenance[m].discard((PROVENANCE_NODE, nid))
            for m in old.mention_ids:
                self._provenance[m].discard((PROVENANCE_MENTION, nid))
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
        if text_searchable(after):
            part.node_text.add(nid, " ".join([node.name, *node.aliases, node.summary]))
        for m in node.memory_ids:
            self._provenance[m].add((PROVENANCE_NODE, nid))
        for m in node.mention_ids:
            self._provenance[m].add((PROVENANCE_MENTION, nid))
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

    def rewrite_journal(self, entries: Sequence[tuple[int, Change]]) -> None:
        fixed = dict(entries)
        with self._lock:
            self._journal = [(s, fixed.get(s, c)) for s, c in self._journal]

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

    def meta_items(self, prefix: str) -> dict[str, str]:
        return {k: v for k, v in self._meta.items() if k.startswith(prefix)}

    def set_meta_many(self, items: Mapping[str, str | None]) -> None:
        for key, value in items.items():
            if value is None:
                self._meta.pop(key, None)
            else:
                self._meta[key] = value

    def close(self) -> None:
        """Nothing to release; the data goes with the object."""
